package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/diff"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/reconcile/tree"
	"github.com/olmsync/olmsync/render"
)

// treeOf is the dashboard's tree of a Sync: its apps, OLM's chain down
// to the Pods, and the namespaces each OperatorGroup targets.
func (s *Server) treeOf(ctx context.Context, obj *olmsyncv1alpha1.Sync) (*tree.Node, error) {
	var appsOf map[string]string
	if s.opts.AppsOf != nil {
		appsOf = s.opts.AppsOf(client.ObjectKeyFromObject(obj))
	}
	return tree.Build(ctx, s.opts.Reader, obj, tree.Options{Apps: true, AppOf: appsOf, TargetNamespaces: true, Workloads: true})
}

// graphOf is the resource graph of a Sync's tree, with the CatalogSources outside it its
// Subscriptions resolve from, read from the cache.
func (s *Server) graphOf(ctx context.Context, root *tree.Node) *Graph {
	return buildGraph(root, func(k types.NamespacedName) *tree.Node { return tree.CatalogSourceNode(ctx, s.opts.Reader, k) })
}

// node finds the node ?id= names in the Sync's graph: only an object of the Sync's
// graph is shown, so that a caller who may get the Sync learns nothing else.
func (s *Server) node(q *request, obj *olmsyncv1alpha1.Sync) (GraphNode, error) {
	id := q.URL.Query().Get("id")
	if id == "" || len(id) > 1024 {
		return GraphNode{}, badRequest("query parameter id: want a node's id, as the graph names it")
	}
	root, err := s.treeOf(q.Context(), obj)
	if err != nil {
		return GraphNode{}, err
	}
	for _, n := range s.graphOf(q.Context(), root).Nodes {
		if n.ID == id {
			return n, nil
		}
	}
	return GraphNode{}, notFound("%s is no object of Sync %s", id, client.ObjectKeyFromObject(obj))
}

// ResourceView is the panel of one node of a Sync's graph: the object as the cluster has
// it, its conditions and its Events.
type ResourceView struct {
	Node GraphNode `json:"node"`
	// Live is the object as the API server has it now, as YAML: without managedFields,
	// and a Secret's values (data, stringData, kubectl's last-applied copy) masked.
	Live string `json:"live,omitempty"`
	// LiveError says why there is no Live ("not found", "forbidden", …); an app has
	// neither.
	LiveError  string      `json:"liveError,omitempty"`
	Conditions []Condition `json:"conditions"`
	Events     []Event     `json:"events"`
}

// Condition is one of an object's status.conditions; a CSV's phase history is read as
// conditions whose Type is the phase.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// maxObjectEvents bounds the Events of one object in its panel, newest first.
const maxObjectEvents = 50

func (s *Server) resource(q *request) (any, error) {
	obj, err := q.getSync("get")
	if err != nil {
		return nil, err
	}
	n, err := s.node(q, obj)
	if err != nil {
		return nil, err
	}
	v := ResourceView{Node: n, Conditions: []Condition{}, Events: []Event{}}
	if n.Kind == "App" {
		return v, nil
	}
	ref := ObjectRef{Kind: n.Kind, Namespace: n.Namespace, Name: n.Name}
	if v.Events, err = s.eventsOf(q.Context(), map[ObjectRef]bool{ref: true}, maxObjectEvents); err != nil {
		return nil, err
	}
	if s.opts.Live == nil {
		v.LiveError = "live manifests are not available on this dashboard"
		return v, nil
	}
	gv, err := schema.ParseGroupVersion(n.APIVersion)
	if err != nil || n.APIVersion == "" {
		v.LiveError = "no apiVersion known"
		return v, nil
	}
	live, err := s.opts.Live(q.Context(), obj, gv.WithKind(n.Kind), types.NamespacedName{Namespace: n.Namespace, Name: n.Name}, n.Managed)
	switch {
	case apierrors.IsNotFound(err):
		v.LiveError = "not found in the cluster"
		return v, nil
	case apierrors.IsForbidden(err):
		v.LiveError = "olmsync may not read it: " + err.Error()
		return v, nil
	case err != nil:
		v.LiveError = err.Error()
		return v, nil
	}
	m := shown(live)
	data, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("write %s as YAML: %w", n.ID, err)
	}
	v.Live, v.Conditions = string(data), conditionsOf(m)
	return v, nil
}

// shown is an object as the dashboard may show it: a copy without managedFields, and,
// for a Secret, every value of data and stringData and kubectl's last-applied copy
// masked (diff.MaskSecret), so that no Secret's value ever reaches a browser.
func shown(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	if isSecret(c.GetAPIVersion(), c.GetKind()) {
		diff.MaskSecret(c.Object, nil)
	}
	return c.Object
}

func isSecret(apiVersion, kind string) bool {
	return kind == "Secret" && groupOf(apiVersion) == ""
}

// conditionsOf reads status.conditions: metav1-style ones (type, status, reason,
// message), and a CSV's phase history (phase, reason, message).
func conditionsOf(obj map[string]any) []Condition {
	list, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	out := []Condition{}
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { v, _ := m[k].(string); return v }
		out = append(out, Condition{Type: cmp.Or(str("type"), str("phase")), Status: str("status"), Reason: str("reason"),
			Message: str("message"), LastTransitionTime: cmp.Or(str("lastTransitionTime"), str("lastUpdateTime"))})
	}
	return out
}

// eventsOf are the Events about objects, from the cache, newest first, at most limit.
func (s *Server) eventsOf(ctx context.Context, objects map[ObjectRef]bool, limit int) ([]Event, error) {
	namespaces := map[string]bool{}
	for o := range objects {
		namespaces[cmp.Or(o.Namespace, metav1.NamespaceDefault)] = true
	}
	out := []Event{}
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) {
		var list corev1.EventList
		if err := s.opts.Reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("list the Events of namespace %s: %w", ns, err)
		}
		for i := range list.Items {
			ev := &list.Items[i]
			ref := ObjectRef{ev.InvolvedObject.Kind, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name}
			if objects[ref] {
				out = append(out, Event{Type: ev.Type, Reason: ev.Reason, Object: ref, Message: ev.Message, Count: ev.Count, LastSeen: tree.EventTime(ev)})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Event) int { return b.LastSeen.Compare(a.LastSeen) })
	return out[:min(len(out), limit)], nil
}

// DesiredView is an object as Git has it at the revision the Sync applied, and where.
type DesiredView struct {
	Revision string `json:"revision"`
	App      string `json:"app"`
	// File and Line are where it is written, File relative to spec.path (as the file
	// view takes it), Path in the repository, Link to it on the forge when known. For a
	// generated object, the generator's entry; for one of a remote base, Repo and Ref
	// name it.
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`
	Path        string `json:"path,omitempty"`
	Link        string `json:"link,omitempty"`
	GeneratedBy string `json:"generatedBy,omitempty"`
	Repo        string `json:"repo,omitempty"`
	Ref         string `json:"ref,omitempty"`
	// Manifest is the object an apply sends, as YAML, in the namespace it lands in; a
	// Secret's values masked.
	Manifest string `json:"manifest"`
}

func (s *Server) desired(q *request) (any, error) {
	obj, err := q.getSync("get")
	if err != nil {
		return nil, err
	}
	n, err := s.node(q, obj)
	if err != nil {
		return nil, err
	}
	if !n.Managed {
		return nil, notFound("%s is not applied from Git: OLM or the cluster made it", n.ID)
	}
	revision := obj.Status.LastAppliedRevision
	if revision == "" {
		return nil, notFound("Sync %s has applied no revision yet", client.ObjectKeyFromObject(obj))
	}
	if s.opts.Desired == nil {
		return nil, notFound("desired manifests are not available on this dashboard")
	}
	objs, err := s.renders.get(q.Context(), obj, revision, s.diffs, s.opts.Desired)
	if err != nil {
		return nil, err
	}
	want := inventory.Entry{Namespace: n.Namespace, Name: n.Name, Group: groupOf(n.APIVersion), Kind: n.Kind}
	for _, o := range objs {
		e := inventory.EntryOfRendered(o)
		if e.Group != want.Group || e.Kind != want.Kind || e.Namespace != want.Namespace || e.Name != want.Name {
			continue
		}
		data, err := yaml.Marshal(shown(apply.ObjectsOf([]*render.Object{o})[0]))
		if err != nil {
			return nil, err
		}
		v := DesiredView{Revision: revision, App: o.App, File: o.Source.File, Line: o.Source.Line, GeneratedBy: o.Source.GeneratedBy,
			Repo: o.Source.Repo, Ref: o.Source.Ref, Manifest: string(data)}
		if o.Source.Repo == "" {
			v.Path = repoPath(obj.Spec.Path, o.Source.File)
			v.Link = ForgeLink(obj.Spec.Source.URL, commitOf(revision), v.Path, o.Source.Line)
		}
		return v, nil
	}
	return nil, notFound("%s is not rendered at %s (no longer in Git?)", n.ID, revision)
}

// renders keeps the objects a few revisions of Syncs rendered, for the desired view:
// a render reads the whole revision, and a user opens one object after another.
type renders struct {
	mu sync.Mutex
	m  map[string]*renderEntry
}

type renderEntry struct {
	done chan struct{}
	at   time.Time
	objs []*render.Object
	err  error
}

// renderTTL is how long a render is reused: a revision does not change, but the
// variables postBuild substitutes from ConfigMaps and Secrets may.
const renderTTL = time.Minute

// maxRenders bounds the renders kept.
const maxRenders = 8

// get is the render of obj at revision: a fresh kept one, else one made now by render
// (one at a time per Sync and revision), which takes a place of busy (429 when there is
// none: renders and diffs share the bound).
func (r *renders) get(ctx context.Context, obj *olmsyncv1alpha1.Sync, revision string, busy chan struct{},
	render func(context.Context, *olmsyncv1alpha1.Sync, string) ([]*render.Object, error)) ([]*render.Object, error) {
	key := fmt.Sprintf("%s@%d@%s", obj.UID, obj.Generation, revision)
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string]*renderEntry{}
	}
	e, ok := r.m[key]
	if ok && (e.at.IsZero() || time.Since(e.at) < renderTTL) {
		r.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return e.objs, e.err
	}
	select {
	case busy <- struct{}{}:
	default:
		r.mu.Unlock()
		return nil, &Error{Status: 429, Message: fmt.Sprintf("%d diffs or renders are running; try again in a moment", maxDiffs)}
	}
	if len(r.m) >= maxRenders {
		oldest := ""
		for k, v := range r.m {
			if !v.at.IsZero() && (oldest == "" || v.at.Before(r.m[oldest].at)) {
				oldest = k
			}
		}
		delete(r.m, oldest)
	}
	e = &renderEntry{done: make(chan struct{})}
	r.m[key] = e
	r.mu.Unlock()

	// Others may wait for it: the render is not the first caller's to cancel.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), obj.FetchTimeout()+time.Minute)
	objs, err := render(rctx, obj, revision)
	cancel()
	<-busy
	r.mu.Lock()
	e.objs, e.err, e.at = objs, err, time.Now()
	if err != nil {
		e.err = &Error{Status: 502, Message: fmt.Sprintf("render Sync %s at %s: %v", client.ObjectKeyFromObject(obj), revision, err)}
		delete(r.m, key) // a failure is not kept
	}
	r.mu.Unlock()
	close(e.done)
	return e.objs, e.err
}
