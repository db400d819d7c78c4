package dashboard

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/konfig"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/safeyaml"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/diff"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/reconcile/receiver"
	"github.com/olmsync/olmsync/reconcile/tree"
)

func syncAttrs(verb, namespace, name string) authorizationv1.ResourceAttributes {
	return authorizationv1.ResourceAttributes{Verb: verb, Group: olmsyncv1alpha1.GroupName, Resource: "syncs", Namespace: namespace, Name: name}
}

// key reads the namespace and name of the path, refusing what no object can be named.
func (q *request) key() (types.NamespacedName, error) {
	k := types.NamespacedName{Namespace: q.PathValue("namespace"), Name: q.PathValue("name")}
	if errs := validation.IsDNS1123Label(k.Namespace); len(errs) > 0 {
		return k, badRequest("namespace %q: %s", k.Namespace, errs[0])
	}
	if errs := validation.IsDNS1123Subdomain(k.Name); len(errs) > 0 {
		return k, badRequest("name %q: %s", k.Name, errs[0])
	}
	return k, nil
}

// getSync reads a Sync after checking the caller may get it (so that a caller who may
// not learns nothing of whether it exists): from the cache for a read, from the API
// server for an action (verb patch), which must not decide on a copy the cache has not
// brought up to date yet (a Sync suspended a moment ago).
func (q *request) getSync(verb string) (*olmsyncv1alpha1.Sync, error) {
	k, err := q.key()
	if err != nil {
		return nil, err
	}
	if err := q.must(syncAttrs(verb, k.Namespace, k.Name)); err != nil {
		return nil, err
	}
	r := q.s.opts.Reader
	if verb != "get" {
		r = q.s.opts.Writer
	}
	obj := &olmsyncv1alpha1.Sync{}
	if err := r.Get(q.Context(), k, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound("Sync %s not found", k)
		}
		return nil, err
	}
	return obj, nil
}

// SyncList is the answer of /api/v1/syncs.
type SyncList struct {
	Items []SyncSummary `json:"items"`
	// Clusters, Namespaces and Packages are every value the filters can take, over the
	// Syncs the caller may list (before filtering).
	Clusters   []string `json:"clusters"`
	Namespaces []string `json:"namespaces"`
	Packages   []string `json:"packages"`
}

func (s *Server) listSyncs(q *request) (any, error) {
	f, err := filterFrom(q.URL.Query())
	if err != nil {
		return nil, err
	}
	var list olmsyncv1alpha1.SyncList
	if err := s.opts.Reader.List(q.Context(), &list); err != nil {
		return nil, err
	}
	allowed := map[string]bool{}
	var all []SyncSummary
	clusters, namespaces, packages := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range list.Items {
		obj := &list.Items[i]
		ok, seen := allowed[obj.Namespace]
		if !seen {
			if ok, err = q.may(syncAttrs("list", obj.Namespace, "")); err != nil {
				return nil, err
			}
			allowed[obj.Namespace] = ok
		}
		if !ok {
			continue
		}
		sum := summarize(obj, s.packagesOf(q.Context(), obj))
		all = append(all, sum)
		clusters[sum.Cluster], namespaces[sum.Namespace] = true, true
		for _, p := range sum.Packages {
			packages[p] = true
		}
	}
	slices.SortFunc(all, func(a, b SyncSummary) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	delete(clusters, "")
	return SyncList{Items: f.apply(all), Clusters: sortedKeys(clusters), Namespaces: sortedKeys(namespaces), Packages: sortedKeys(packages)}, nil
}

// sortedKeys are m's keys, sorted; an empty list (JSON []) when there are none.
func sortedKeys(m map[string]bool) []string {
	return append([]string{}, slices.Sorted(maps.Keys(m))...)
}

// packagesOf are the operator packages of a Sync's Subscriptions, read from the cache.
func (s *Server) packagesOf(ctx context.Context, obj *olmsyncv1alpha1.Sync) []string {
	inv, err := inventory.FromStatus(obj.Status.Inventory)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range inv.Entries() {
		if e.Group != operatorsv1alpha1.GroupName || e.Kind != operatorsv1alpha1.SubscriptionKind {
			continue
		}
		sub := &operatorsv1alpha1.Subscription{}
		if s.opts.Reader.Get(ctx, types.NamespacedName{Namespace: e.Namespace, Name: e.Name}, sub) == nil &&
			!slices.Contains(out, sub.Spec.Package) {
			out = append(out, sub.Spec.Package)
		}
	}
	slices.Sort(out)
	return out
}

// SyncView is the application view of one Sync.
type SyncView struct {
	Summary            SyncSummary                         `json:"summary"`
	Conditions         []metav1.Condition                  `json:"conditions"`
	Tree               *tree.Node                          `json:"tree"`
	Graph              *Graph                              `json:"graph"`
	Violations         []Violation                         `json:"violations"`
	ViolationCount     int                                 `json:"violationCount"`
	History            []olmsyncv1alpha1.ReconcileSnapshot `json:"history"`
	LastFetched        string                              `json:"lastFetchedRevision,omitempty"`
	LastApplied        string                              `json:"lastAppliedRevision,omitempty"`
	LastPrune          *olmsyncv1alpha1.PruneSummary       `json:"lastPrune,omitempty"`
	LastRevisionChange *olmsyncv1alpha1.RevisionChange     `json:"lastRevisionChange,omitempty"`
	ApprovalsPending   []ObjectRef                         `json:"approvalsPending"`
}

// ObjectRef names an object.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func (s *Server) syncView(q *request) (any, error) {
	obj, err := q.getSync("get")
	if err != nil {
		return nil, err
	}
	root, err := s.treeOf(q.Context(), obj)
	if err != nil {
		return nil, err
	}
	v := SyncView{Summary: summarize(obj, s.packagesOf(q.Context(), obj)), Conditions: append([]metav1.Condition{}, obj.Status.Conditions...), Tree: root,
		Graph:      s.graphOf(q.Context(), root),
		Violations: violations(obj), ViolationCount: obj.Status.ViolationCount, History: obj.Status.History,
		LastFetched: obj.Status.LastFetchedRevision, LastApplied: obj.Status.LastAppliedRevision, LastPrune: obj.Status.LastPrune,
		LastRevisionChange: obj.Status.LastRevisionChange, ApprovalsPending: []ObjectRef{}}
	if v.History == nil {
		v.History = []olmsyncv1alpha1.ReconcileSnapshot{}
	}
	root.Walk(func(n *tree.Node) {
		if n.Kind == "InstallPlan" && n.Phase == string(operatorsv1alpha1.InstallPlanPhaseRequiresApproval) {
			v.ApprovalsPending = append(v.ApprovalsPending, ObjectRef{Kind: n.Kind, Namespace: n.Namespace, Name: n.Name})
		}
	})
	return v, nil
}

// Event is a Kubernetes Event of an object of a Sync's tree.
type Event struct {
	Type     string    `json:"type"`
	Reason   string    `json:"reason"`
	Object   ObjectRef `json:"object"`
	Message  string    `json:"message"`
	Count    int32     `json:"count,omitempty"`
	LastSeen time.Time `json:"lastSeen"`
}

// maxEvents bounds the events of one answer, newest first.
const maxEvents = 200

func (s *Server) events(q *request) (any, error) {
	obj, err := q.getSync("get")
	if err != nil {
		return nil, err
	}
	root, err := tree.Build(q.Context(), s.opts.Reader, obj, tree.Options{Workloads: true})
	if err != nil {
		return nil, err
	}
	objects := map[ObjectRef]bool{}
	root.Walk(func(n *tree.Node) { objects[ObjectRef{n.Kind, n.Namespace, n.Name}] = true })
	return s.eventsOf(q.Context(), objects, maxEvents)
}

// diff is `olmsync diff sync` of the Sync; ?kind=&namespace=&name= keep one object.
func (s *Server) diff(q *request) (any, error) {
	obj, err := q.getSync("get")
	if err != nil {
		return nil, err
	}
	if s.opts.Diff == nil {
		return nil, notFound("diffs are not available on this dashboard")
	}
	select {
	case s.diffs <- struct{}{}:
		defer func() { <-s.diffs }()
	default:
		return nil, &Error{Status: 429, Message: fmt.Sprintf("%d diffs are running; try again in a moment", maxDiffs)}
	}
	ctx, cancel := context.WithTimeout(q.Context(), obj.FetchTimeout()+time.Minute)
	defer cancel()
	report, err := s.opts.Diff(ctx, obj)
	if err != nil {
		return nil, &Error{Status: 502, Message: fmt.Sprintf("diff Sync %s: %v", client.ObjectKeyFromObject(obj), err)}
	}
	query := q.URL.Query()
	if kind, name := query.Get("kind"), query.Get("name"); kind != "" || name != "" {
		var keep []diff.Object
		for _, o := range report.Objects {
			if o.Kind == kind && o.Name == name && o.Namespace == query.Get("namespace") {
				keep = append(keep, o)
			}
		}
		if keep == nil {
			return nil, notFound("%s %s/%s is not an object of Sync %s", kind, query.Get("namespace"), name, client.ObjectKeyFromObject(obj))
		}
		whole := report
		report = diff.NewReport(keep)
		report.Sync, report.Revision, report.LastAppliedRevision = whole.Sync, whole.Revision, whole.LastAppliedRevision
		report.PolicyMode, report.Prune, report.Suspended = whole.PolicyMode, whole.Prune, whole.Suspended
	}
	return report, nil
}

// graph is a Subscription's channel from the catalog the embedded OLM loaded.
func (s *Server) graph(q *request) (any, error) {
	k, err := q.key()
	if err != nil {
		return nil, err
	}
	if err := q.must(authorizationv1.ResourceAttributes{Verb: "get", Group: operatorsv1alpha1.GroupName, Resource: "subscriptions", Namespace: k.Namespace, Name: k.Name}); err != nil {
		return nil, err
	}
	sub := &operatorsv1alpha1.Subscription{}
	if err := s.opts.Reader.Get(q.Context(), k, sub); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound("Subscription %s not found", k)
		}
		return nil, err
	}
	source := types.NamespacedName{Namespace: sub.Spec.CatalogSourceNamespace, Name: sub.Spec.CatalogSource}
	if s.opts.Catalog == nil {
		return nil, notFound("the embedded OLM does not run here, so no catalog is loaded to draw the graph of %s from", k)
	}
	c, ok := s.opts.Catalog(source)
	if !ok {
		return nil, notFound("catalog %s of Subscription %s is not loaded (yet)", source, k)
	}
	g, err := catalog.BuildGraph(c, sub.Spec.Package, sub.Spec.Channel)
	if err != nil {
		return nil, notFound("Subscription %s: %v in catalog %s", k, err, source)
	}
	if len(g.Channels) == 0 {
		return nil, notFound("package %s has no channels in catalog %s", sub.Spec.Package, source)
	}
	ch := g.Channels[0]
	if sub.Spec.Channel == "" {
		for _, c := range g.Channels {
			if c.Default {
				ch = c
			}
		}
	}
	out := UpgradeGraph{Package: g.Package, Channel: ch.Name, Catalog: source.String(), Installed: sub.Status.InstalledCSV, Graph: ch}
	if len(ch.Heads) == 1 {
		out.Head = ch.Heads[0]
	}
	if out.Installed != "" {
		out.Path = upgradePath(ch, out.Installed)
		if len(out.Path) > 0 {
			out.Next = out.Path[0]
		}
	}
	return out, nil
}

// writer authenticates a write: always a token, and a same-origin request.
func (s *Server) writer(q *request) error {
	if err := sameOrigin(q.Request); err != nil {
		return err
	}
	if q.id == anonymous {
		return errUnauthenticated
	}
	return nil
}

// Done is the answer of an action.
type Done struct {
	Action string `json:"action"`
	Object string `json:"object"`
	By     string `json:"by"`
	Value  string `json:"value,omitempty"`
}

func (s *Server) reconcile(q *request) (any, error) {
	if err := s.writer(q); err != nil {
		return nil, err
	}
	obj, err := q.getSync("patch")
	if err != nil {
		return nil, err
	}
	if obj.Spec.Suspend {
		return nil, conflict("Sync %s is suspended: resume it first", client.ObjectKeyFromObject(obj))
	}
	at := s.opts.Now().UTC().Format(time.RFC3339Nano)
	if err := receiver.RequestReconcile(s.opts.Writer, func() time.Time { return s.opts.Now() })(q.Context(), client.ObjectKeyFromObject(obj)); err != nil {
		return nil, err
	}
	s.logAction(q, "reconcile", "Sync", client.ObjectKeyFromObject(obj))
	return Done{Action: "reconcile", Object: "Sync " + client.ObjectKeyFromObject(obj).String(), By: q.id.Username, Value: at}, nil
}

func (s *Server) suspend(suspend bool) func(*request) (any, error) {
	action := "resume"
	if suspend {
		action = "suspend"
	}
	return func(q *request) (any, error) {
		if err := s.writer(q); err != nil {
			return nil, err
		}
		obj, err := q.getSync("patch")
		if err != nil {
			return nil, err
		}
		key := client.ObjectKeyFromObject(obj)
		patch := map[string]any{"spec": map[string]any{"suspend": suspend}}
		if !suspend {
			// As `olmsync resume` does: reconcile at once rather than at the interval.
			patch["metadata"] = map[string]any{"annotations": map[string]string{olmsyncv1alpha1.ReconcileRequestAnnotation: s.opts.Now().UTC().Format(time.RFC3339Nano)}}
		}
		if err := s.mergePatch(q.Context(), &olmsyncv1alpha1.Sync{}, key, patch); err != nil {
			return nil, err
		}
		s.logAction(q, action, "Sync", key)
		return Done{Action: action, Object: "Sync " + key.String(), By: q.id.Username}, nil
	}
}

// ApprovedByAnnotation records on an InstallPlan approved through the dashboard who
// approved it (the username the API server's TokenReview gave).
const ApprovedByAnnotation = "olmsync.dev/approved-by"

// ApprovedAtAnnotation records when.
const ApprovedAtAnnotation = "olmsync.dev/approved-at"

func (s *Server) approve(q *request) (any, error) {
	if err := s.writer(q); err != nil {
		return nil, err
	}
	k, err := q.key()
	if err != nil {
		return nil, err
	}
	if err := q.must(authorizationv1.ResourceAttributes{Verb: "update", Group: operatorsv1alpha1.GroupName, Resource: "installplans", Namespace: k.Namespace, Name: k.Name}); err != nil {
		return nil, err
	}
	// From the API server: the approval is decided on the plan as it is now.
	ip := &operatorsv1alpha1.InstallPlan{}
	if err := s.opts.Writer.Get(q.Context(), k, ip); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound("InstallPlan %s not found", k)
		}
		return nil, err
	}
	if ip.Spec.Approval != operatorsv1alpha1.ApprovalManual {
		return nil, conflict("InstallPlan %s is approved %s, not Manual: nothing to approve", k, ip.Spec.Approval)
	}
	if ip.Spec.Approved {
		return nil, conflict("InstallPlan %s is already approved", k)
	}
	patch := map[string]any{
		// The resourceVersion makes the patch fail if the plan changed since it was read.
		"metadata": map[string]any{"resourceVersion": ip.ResourceVersion, "annotations": map[string]string{
			ApprovedByAnnotation: q.id.Username, ApprovedAtAnnotation: s.opts.Now().UTC().Format(time.RFC3339)}},
		"spec": map[string]any{"approved": true},
	}
	if err := s.mergePatch(q.Context(), &operatorsv1alpha1.InstallPlan{}, k, patch); err != nil {
		return nil, err
	}
	s.logAction(q, "approve", "InstallPlan", k)
	return Done{Action: "approve", Object: "InstallPlan " + k.String(), By: q.id.Username, Value: fmt.Sprint(ip.Spec.ClusterServiceVersionNames)}, nil
}

// mergePatch writes a JSON merge patch; a conflict or a missing object is the caller's.
func (s *Server) mergePatch(ctx context.Context, obj client.Object, k types.NamespacedName, patch map[string]any) error {
	obj.SetNamespace(k.Namespace)
	obj.SetName(k.Name)
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	err = s.opts.Writer.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data), client.FieldOwner("olmsync-dashboard"))
	switch {
	case apierrors.IsNotFound(err):
		return notFound("%s not found", k)
	case apierrors.IsConflict(err):
		return conflict("%s changed meanwhile; try again", k)
	case apierrors.IsInvalid(err):
		return badRequest("%v", err)
	}
	return err
}

func (s *Server) logAction(q *request, action, kind string, k types.NamespacedName) {
	s.opts.Log.Info("dashboard action", "action", action, "kind", kind, "object", k.String(),
		"user", q.id.Username, "uid", q.id.UID, "groups", q.id.Groups, "remote", q.RemoteAddr)
}

// FileView is a file of a Sync's repository at the revision its violations are of.
type FileView struct {
	Sync     string   `json:"sync"`
	Revision string   `json:"revision"`
	Path     string   `json:"path"`
	Lines    []string `json:"lines"`
	// Truncated: the file is longer than maxFileView bytes; Lines are its beginning.
	Truncated bool `json:"truncated,omitempty"`
}

// maxFileView bounds the part of a file the file view shows.
const maxFileView = 1 << 20

// file shows a file of the Sync's repository at status.lastFetchedRevision (the
// revision of status.violations), or at ?revision= when it is status.lastAppliedRevision
// (the desired view's), so that a violation and a desired object link to their file and
// line whatever hosts the repository: ?path= is relative to spec.path, as a violation's
// file. Only manifests (YAML, JSON) are shown, a Secret's values masked (maskFile), and
// none that a kustomization reads into a Secret.
func (s *Server) file(q *request) (any, error) {
	obj, err := q.getSync("get")
	if err != nil {
		return nil, err
	}
	p := q.URL.Query().Get("path")
	if p == "" || len(p) > 1024 || strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") || strings.ContainsRune(p, 0) {
		return nil, badRequest("query parameter path %q: want a relative path inside the repository", p)
	}
	if !shownFile(p) {
		return nil, badRequest("query parameter path %q: only manifests (.yaml, .yml, .json) are shown", p)
	}
	revision := obj.Status.LastFetchedRevision
	if r := q.URL.Query().Get("revision"); r != "" && r != revision {
		if r != obj.Status.LastAppliedRevision {
			return nil, badRequest("query parameter revision %q: only the fetched or the applied revision of the Sync is shown", r)
		}
		revision = r
	}
	if revision == "" || s.opts.File == nil {
		return nil, notFound("Sync %s has no fetched revision to read %s from", client.ObjectKeyFromObject(obj), p)
	}
	data, err := s.opts.File(q.Context(), obj, revision, p)
	if err != nil {
		return nil, notFound("%s at %s: %v", p, revision, err)
	}
	if s.generatorSource(q.Context(), obj, revision, p) {
		return nil, notFound("%s at %s is not shown: a secretGenerator reads it into a Secret", p, revision)
	}
	if data, err = maskFile(p, data); err != nil {
		return nil, notFound("%s at %s is not shown: %v", p, revision, err)
	}
	v := FileView{Sync: obj.Namespace + "/" + obj.Name, Revision: revision, Path: p}
	if len(data) > maxFileView {
		data, v.Truncated = data[:maxFileView], true
	}
	v.Lines = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	return v, nil
}

// generatorSource reports whether a kustomization in file's folder or one above it reads
// file into a Secret: a secretGenerator's files or envs.
func (s *Server) generatorSource(ctx context.Context, obj *olmsyncv1alpha1.Sync, revision, file string) bool {
	for dir := path.Dir(file); ; dir = path.Dir(dir) {
		for _, name := range konfig.RecognizedKustomizationFileNames() {
			k := path.Join(dir, name)
			data, err := s.opts.File(ctx, obj, revision, k)
			if err != nil {
				continue
			}
			for _, src := range secretSources(k, data) {
				if path.Join(dir, src) == file {
					return true
				}
			}
		}
		if dir == "." || dir == "/" {
			return false
		}
	}
}

// secretSources are the files a kustomization's secretGenerators read, as it names them
// (relative to its folder).
func secretSources(name string, data []byte) []string {
	docs, err := safeyaml.Documents(name, data)
	if err != nil || len(docs) == 0 || len(docs[0].Content) != 1 {
		return nil
	}
	var out []string
	gens := value(docs[0].Content[0], "secretGenerator")
	if gens == nil {
		return nil
	}
	for _, g := range gens.Content {
		for _, field := range []string{"files", "envs", "env"} {
			v := value(g, field)
			if v == nil {
				continue
			}
			items := v.Content
			if v.Kind == yaml.ScalarNode {
				items = []*yaml.Node{v}
			}
			for _, item := range items {
				if item.Kind == yaml.ScalarNode {
					_, src, ok := strings.Cut(item.Value, "=")
					if !ok || field != "files" {
						src = item.Value
					}
					out = append(out, src)
				}
			}
		}
	}
	return out
}
