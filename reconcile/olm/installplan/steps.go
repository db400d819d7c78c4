package installplan

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/crdupgrade"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/olm/phase"
	"github.com/olmsync/olmsync/olm/rbac"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/written"
)

// StepError is a step that cannot be executed whatever the retries: a manifest that does not
// decode or that the API server refuses as invalid. It fails the plan. (A CRD update
// crdupgrade.Check refuses is crdupgrade's *Error, unwrapped: its message is OLM's.)
type StepError struct {
	Kind, Name string
	Err        error
}

func (e *StepError) Error() string {
	if rbac.IsStepError(e.Err) {
		// The request's error says so already: OLM says it once.
		return e.Err.Error()
	}
	return rbac.StepError("create", e.Kind, e.Name, e.Err).Error() // OLM's words for the kind
}
func (e *StepError) Unwrap() error { return e.Err }

// installedKinds are the kinds OLM's plan execution installs by name
// (catalog.ExecutePlan), and supportedKinds the others it takes
// (catalog/supportedresources.go). A step of any other kind is UnsupportedResource, and the
// plan "contains invalid data".
var (
	installedKinds = []string{
		"CustomResourceDefinition", v1alpha1.ClusterServiceVersionKind, v1alpha1.SubscriptionKind, resolve.BundleSecretKind,
		"Secret", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ServiceAccount", "Service", "ConfigMap",
	}
	supportedKinds = []string{
		"PrometheusRule", "ServiceMonitor", "PodDisruptionBudget", "PriorityClass", "VerticalPodAutoscaler",
		"ConsoleYAMLSample", "ConsoleQuickStart", "ConsoleCLIDownload", "ConsoleLink", "ConsolePlugin", "NetworkPolicy",
	}
)

// Installable reports whether OLM installs a step of the kind.
func Installable(kind string) bool {
	return slices.Contains(installedKinds, kind) || slices.Contains(supportedKinds, kind)
}

// GeneratedByAnnotation names, on a Subscription a plan generated for a dependency, that
// plan; ManagedLabel marks it as OLM's (olm-behaviour 1.7).
const (
	GeneratedByAnnotation = "olm.generated-by"
	ManagedLabel          = groups.ManagedLabel
)

// executor executes the steps of one plan in its namespace.
type executor struct {
	// client writes the steps, and reads the objects they update: with the account's rights
	// in a scoped install.
	client client.Client
	// crds writes the CRD steps, with olmsync's own rights (as OLM's StepBuilder does).
	crds      client.Client
	reader    client.Reader
	mapper    meta.RESTMapper
	namespace string
	// plan is the InstallPlan's name, recorded on the Subscriptions it generates.
	plan string
	// warnings are CRD validation failures tolerated because of a conversion webhook.
	warnings []string
	// csvs are the CSVs the steps are owned by, read once per execution: a plan's RBAC and
	// ServiceAccount steps all name the same CSV.
	csvs map[string]*v1alpha1.ClusterServiceVersion
	// checked are the cluster's CRDs checkCRDs read and found the plan's update of safe, by
	// name, with the check's result: the CRD step updates from them instead of trying a
	// create it knows will fail and reading and checking the CRD a second time (three
	// requests per plan that shares a CRD with another namespace's).
	checked map[string]checkedCRD
	// cached reads the kinds the manager caches (cachedKinds) through written, and written
	// remembers what the steps of those kinds wrote: a ServiceAccount or RBAC object the CSV
	// controller (or an earlier execution) made moments ago is updated from what was written,
	// not created again (refused: AlreadyExists) and read back. Nil in a scoped install,
	// whose steps are written, and so checked, with the account's rights, as OLM writes them.
	cached  client.Client
	written *written.Objects
}

// cachedKinds are the kinds of steps the manager caches (olm.CacheByObject selects its
// RBAC by the labels the steps put on it: olm.managed, the CSV's owner labels).
var cachedKinds = map[string]bool{"ServiceAccount": true, "Role": true, "RoleBinding": true, "ClusterRole": true, "ClusterRoleBinding": true}

// checkedCRD is a cluster CRD and the result of checking an update of it.
type checkedCRD struct {
	existing *apiextensionsv1.CustomResourceDefinition
	result   crdupgrade.Result
}

// execute runs one step and returns its new status.
func (e *executor) execute(ctx context.Context, s v1alpha1.Step) (v1alpha1.StepStatus, error) {
	fail := func(err error) (v1alpha1.StepStatus, error) {
		return s.Status, &StepError{Kind: s.Resource.Kind, Name: s.Resource.Name, Err: err}
	}
	switch s.Resource.Kind {
	case "CustomResourceDefinition":
		crd, err := crdupgrade.Decode([]byte(s.Resource.Manifest))
		if err != nil {
			return fail(err)
		}
		return e.applyCRD(ctx, crd, s.Resolving)
	}
	if !Installable(s.Resource.Kind) {
		return v1alpha1.StepStatusUnsupportedResource, v1alpha1.ErrInvalidInstallPlan
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(s.Resource.Manifest), &u.Object); err != nil {
		return fail(fmt.Errorf("decode manifest: %w", err))
	}
	if s.Resource.Kind == resolve.BundleSecretKind {
		u.SetKind("Secret")
	}
	gvk := u.GroupVersionKind()
	mapping, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			// Its CRD may be a step of this plan that is not established yet: try again.
			return v1alpha1.StepStatusWaitingForAPI, fmt.Errorf("%s %s: %w", s.Resource.Kind, s.Resource.Name, err)
		}
		return s.Status, err
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	if namespaced {
		u.SetNamespace(e.namespace)
	} else {
		u.SetNamespace("")
	}
	if gvk.Kind == v1alpha1.SubscriptionKind {
		// OLM marks the Subscriptions a plan generates for dependencies: the Subscription
		// controller points them at this plan instead of resolving them into another.
		u.SetAnnotations(merged(u.GetAnnotations(), map[string]string{GeneratedByAnnotation: e.plan}))
	}
	// OLM's ExecutePlan labels every object a plan writes olm.managed=true (the CSV,
	// Subscriptions, Secrets, RBAC, ServiceAccounts, Services, ConfigMaps, the other kinds);
	// tools select OLM's objects by it.
	u.SetLabels(merged(u.GetLabels(), map[string]string{ManagedLabel: groups.ManagedLabelValue}))
	if gvk.Kind != v1alpha1.ClusterServiceVersionKind && gvk.Kind != v1alpha1.SubscriptionKind {
		if err := e.own(ctx, u, s.Resolving, namespaced); err != nil {
			return s.Status, err
		}
	}
	status, err := e.createOrUpdate(ctx, u, gvk.Kind != v1alpha1.ClusterServiceVersionKind)
	if err != nil && (apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) {
		return fail(err)
	}
	if err == nil && status == v1alpha1.StepStatusCreated && gvk.Kind == v1alpha1.ClusterServiceVersionKind {
		e.created(u)
	}
	return status, err
}

// created remembers a CSV the plan just created, as the API server answered the create, for
// the steps it owns: they need only its name, namespace and UID, so they do not read it back.
func (e *executor) created(u *unstructured.Unstructured) {
	if e.csvs == nil {
		e.csvs = map[string]*v1alpha1.ClusterServiceVersion{}
	}
	e.csvs[u.GetName()] = &v1alpha1.ClusterServiceVersion{
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID()},
	}
}

// own makes a bundle object the CSV's, as OLM does: namespaced objects get the CSV's
// non-blocking owner reference (RBAC steps name the CSV without its UID, which exists only
// now), cluster-scoped ones its owner labels.
func (e *executor) own(ctx context.Context, u *unstructured.Unstructured, csvName string, namespaced bool) error {
	csv, err := e.csv(ctx, csvName)
	if err != nil {
		return err
	}
	if !namespaced {
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range install.OwnerLabels(csv) {
			if _, ok := labels[k]; !ok {
				labels[k] = v
			}
		}
		u.SetLabels(labels)
		return nil
	}
	refs := u.GetOwnerReferences()
	found := false
	for i := range refs {
		if refs[i].Kind == v1alpha1.ClusterServiceVersionKind && refs[i].Name == csv.Name {
			refs[i] = install.OwnerReference(csv)
			found = true
		}
	}
	if !found {
		refs = append(refs, install.OwnerReference(csv))
	}
	u.SetOwnerReferences(refs)
	return nil
}

// csv returns the CSV of a step: the one this execution created (created), else read from
// the API server (a plan created it moments ago: the cache may not show it), once per
// execution.
func (e *executor) csv(ctx context.Context, name string) (*v1alpha1.ClusterServiceVersion, error) {
	if csv, ok := e.csvs[name]; ok {
		return csv, nil
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := e.reader.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: name}, csv); err != nil {
		return nil, fmt.Errorf("get csv %s of the step: %w", name, err)
	}
	if e.csvs == nil {
		e.csvs = map[string]*v1alpha1.ClusterServiceVersion{}
	}
	e.csvs[name] = csv
	return csv, nil
}

// createOrUpdate creates the object (Created) or, when it exists, updates it to the manifest,
// keeping the labels, annotations and owner references others added (Present); an update
// that would change nothing is not sent. A CSV that exists is left as it is: the CSV
// controller owns it from then on. An object of a kind the manager caches is looked for
// there first (cached): one that exists is not created again.
func (e *executor) createOrUpdate(ctx context.Context, u *unstructured.Unstructured, update bool) (v1alpha1.StepStatus, error) {
	exists := false
	for waited := false; !exists; waited = true {
		if existing, ok := e.cachedCopy(ctx, u); ok && update {
			status, err := e.updateFrom(ctx, u, existing)
			switch {
			case err == nil:
				return status, nil
			case apierrors.IsConflict(err):
				exists = true // at a version the cache does not show yet: read it
				e.written.Forget(u)
				continue
			case !apierrors.IsNotFound(err): // (gone since: create it)
				return status, rbac.StepError("update", u.GetKind(), u.GetName(), err)
			}
			e.written.Forget(u)
		}
		made := u.DeepCopy()
		create := func() error { return e.client.Create(ctx, made) }
		ran, err := true, error(nil)
		if e.cached != nil && cachedKinds[u.GetKind()] {
			ran, err = e.written.Create(ctx, made, create)
		} else {
			err = create()
		}
		switch {
		case !ran && err == nil && !waited:
			continue // made by another writer of this process meanwhile: read it
		case !ran && err == nil:
			err = create()
		}
		if err == nil {
			u.SetUID(made.GetUID())
			return v1alpha1.StepStatusCreated, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return v1alpha1.StepStatusUnknown, rbac.StepError("create", u.GetKind(), u.GetName(), err)
		}
		if !update {
			return v1alpha1.StepStatusPresent, nil
		}
		exists = true
	}
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(u.GroupVersionKind())
	// Read with the writer's rights: a scoped install gets, then updates, as the account.
	if err := e.client.Get(ctx, client.ObjectKeyFromObject(u), existing); err != nil {
		return v1alpha1.StepStatusUnknown, rbac.StepError("get", u.GetKind(), u.GetName(), err)
	}
	status, err := e.updateFrom(ctx, u, existing)
	if err != nil {
		return status, rbac.StepError("update", u.GetKind(), u.GetName(), err)
	}
	return status, nil
}

// cachedCopy returns the object u names as the manager's cache shows it, through written,
// when u is of a kind it caches and the execution is not scoped.
func (e *executor) cachedCopy(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	if e.cached == nil || !cachedKinds[u.GetKind()] {
		return nil, false
	}
	obj, err := e.cached.Scheme().New(u.GroupVersionKind())
	if err != nil {
		return nil, false
	}
	typed, ok := obj.(client.Object)
	if !ok || e.written.Get(ctx, e.cached, client.ObjectKeyFromObject(u), typed) != nil {
		return nil, false
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, false
	}
	existing := &unstructured.Unstructured{Object: content}
	existing.SetGroupVersionKind(u.GroupVersionKind())
	return existing, true
}

// updateFrom updates existing to u (Present), keeping the labels, annotations and owner
// references others added; nothing is sent when that changes nothing. u takes the result.
func (e *executor) updateFrom(ctx context.Context, u, existing *unstructured.Unstructured) (v1alpha1.StepStatus, error) {
	desired := u.DeepCopy()
	desired.SetResourceVersion(existing.GetResourceVersion())
	desired.SetLabels(merged(existing.GetLabels(), u.GetLabels()))
	desired.SetAnnotations(merged(existing.GetAnnotations(), u.GetAnnotations()))
	refs := existing.GetOwnerReferences()
	for _, ref := range u.GetOwnerReferences() {
		if !hasOwner(refs, ref) {
			refs = append(refs, ref)
		}
	}
	desired.SetOwnerReferences(refs)
	if e.unchanged(desired, existing) {
		return v1alpha1.StepStatusPresent, nil
	}
	if err := e.client.Update(ctx, desired); err != nil {
		return v1alpha1.StepStatusUnknown, err
	}
	e.remember(desired, existing.GetResourceVersion())
	u.Object = desired.Object
	return v1alpha1.StepStatusPresent, nil
}

// unchanged reports whether an update of existing to desired would leave it as it is: the
// same object once the API server kept what it keeps of existing (its UID, creation time,
// managed fields). Compared as the scheme's Go types, so that a manifest's JSON numbers and
// a cached copy's compare alike; a kind the scheme does not know is never unchanged. In a
// scoped install the update is always sent: the API server checks the account's rights to
// make it, as it does for OLM's.
func (e *executor) unchanged(desired, existing *unstructured.Unstructured) bool {
	if e.cached == nil {
		return false
	}
	scheme := e.cached.Scheme()
	want, err1 := scheme.New(desired.GroupVersionKind())
	have, err2 := scheme.New(existing.GroupVersionKind())
	if err1 != nil || err2 != nil ||
		runtime.DefaultUnstructuredConverter.FromUnstructured(desired.Object, want) != nil ||
		runtime.DefaultUnstructuredConverter.FromUnstructured(existing.Object, have) != nil {
		return false
	}
	w, ok1 := want.(metav1.Object)
	h, ok2 := have.(metav1.Object)
	if !ok1 || !ok2 {
		return false
	}
	w.SetUID(h.GetUID())
	w.SetCreationTimestamp(h.GetCreationTimestamp())
	w.SetGeneration(h.GetGeneration())
	w.SetManagedFields(h.GetManagedFields())
	w.SetResourceVersion(h.GetResourceVersion())
	return equality.Semantic.DeepEqual(want, have)
}

// remember keeps what a step of a cached kind wrote, for the controllers that read it next.
func (e *executor) remember(obj *unstructured.Unstructured, replaced string) {
	if e.cached != nil && cachedKinds[obj.GetKind()] {
		e.written.Wrote(obj, replaced)
	}
}

func hasOwner(refs []metav1.OwnerReference, ref metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.UID == ref.UID && r.Kind == ref.Kind && r.Name == ref.Name {
			return true
		}
	}
	return false
}

func merged(existing, desired map[string]string) map[string]string {
	out := maps.Clone(existing)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, desired)
	return out
}

// applyCRD creates a CRD (Created) or updates it when crdupgrade.Check allows (Present), with
// the installed-alongside annotation naming the CSV it was applied for (the CSV's requirement
// check reads it).
func (e *executor) applyCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, csvName string) (v1alpha1.StepStatus, error) {
	annotations := crd.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	key, value := InstalledAlongside(e.namespace, csvName)
	annotations[key] = value
	crd.SetAnnotations(annotations)
	// OLM's step.go labels the CRDs a plan writes olm.managed=true, on create and update.
	crd.SetLabels(merged(crd.GetLabels(), map[string]string{ManagedLabel: groups.ManagedLabelValue}))
	checked, ok := e.checked[crd.Name]
	delete(e.checked, crd.Name) // used once: a retry of the step reads the cluster again
	if !ok {
		err := e.crds.Create(ctx, crd.DeepCopy())
		if err == nil {
			return v1alpha1.StepStatusCreated, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			if apierrors.IsInvalid(err) {
				return v1alpha1.StepStatusUnknown, &StepError{Kind: "CustomResourceDefinition", Name: crd.Name, Err: err}
			}
			return v1alpha1.StepStatusUnknown, fmt.Errorf("create crd %s: %w", crd.Name, err)
		}
	}
	// The update carries the resourceVersion of the CRD checked: when the CRD changed since
	// (another namespace's plan, the API server's status of it), the API server refuses it,
	// and the CRD is read and checked again.
	labels, annotations := crd.Labels, crd.Annotations
	for attempt := 1; ; attempt++ {
		if checked.existing == nil {
			var err error
			if checked.existing, checked.result, err = e.checkCRD(ctx, crd); err != nil {
				return v1alpha1.StepStatusUnknown, err
			}
			if checked.existing == nil {
				return v1alpha1.StepStatusUnknown, fmt.Errorf("update crd %s: it was deleted meanwhile", crd.Name)
			}
		}
		// Kept: the labels and annotations others put on the CRD. Replaced: the
		// installed-alongside annotations of this namespace's CSVs, by this CSV's.
		crd.ResourceVersion = checked.existing.ResourceVersion
		crd.Labels = merged(checked.existing.Labels, labels)
		crd.Annotations = merged(withoutAlongside(checked.existing.Annotations, e.namespace), annotations)
		err := e.crds.Update(ctx, crd)
		switch {
		case apierrors.IsConflict(err) && attempt < crdUpdateAttempts:
			checked = checkedCRD{}
			continue
		case apierrors.IsInvalid(err):
			return v1alpha1.StepStatusUnknown, &StepError{Kind: "CustomResourceDefinition", Name: crd.Name, Err: err}
		case err != nil:
			return v1alpha1.StepStatusUnknown, fmt.Errorf("update crd %s: %w", crd.Name, err)
		}
		e.warnings = append(e.warnings, checked.result.Warnings...)
		return v1alpha1.StepStatusPresent, nil
	}
}

// crdUpdateAttempts bounds how often a CRD step updates a CRD that keeps changing under it
// before the step fails (and the plan's execution is retried).
const crdUpdateAttempts = 3

// checkCRD runs crdupgrade.Check of crd against the cluster's CRD of its name and the
// custom resources stored under it. It returns the cluster's CRD (nil when there is none:
// nothing to check) and the check's result; a refusal is crdupgrade's *Error, whose message
// is OLM's, unwrapped.
func (e *executor) checkCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, crdupgrade.Result, error) {
	existing := &apiextensionsv1.CustomResourceDefinition{}
	if err := e.reader.Get(ctx, client.ObjectKey{Name: crd.Name}, existing); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, crdupgrade.Result{}, nil
		}
		return nil, crdupgrade.Result{}, fmt.Errorf("get crd %s: %w", crd.Name, err)
	}
	crs, err := e.customResources(ctx, existing, crd)
	if err != nil {
		return nil, crdupgrade.Result{}, err
	}
	res, err := crdupgrade.Check(existing, crd, crs)
	return existing, res, err
}

// checkCRDs runs checkCRD on every CRD step not yet executed, before any step of the plan
// is: a CRD update OLM's check refuses fails the plan with nothing written — no CSV of an
// operator whose CRD cannot be installed, no Subscription that reports it installed. The
// CRD step then updates the CRD it checked (e.checked); a CRD that did not exist at the
// check is created, or, if it appeared meanwhile, read and checked when it is written.
func (e *executor) checkCRDs(ctx context.Context, steps []v1alpha1.Step) error {
	for _, s := range steps {
		if s.Resource.Kind != "CustomResourceDefinition" || s.Status == v1alpha1.StepStatusCreated || s.Status == v1alpha1.StepStatusPresent {
			continue
		}
		crd, err := crdupgrade.Decode([]byte(s.Resource.Manifest))
		if err != nil {
			return &StepError{Kind: s.Resource.Kind, Name: s.Resource.Name, Err: err}
		}
		existing, res, err := e.checkCRD(ctx, crd)
		if err != nil {
			return err
		}
		if existing != nil {
			if e.checked == nil {
				e.checked = map[string]checkedCRD{}
			}
			e.checked[crd.Name] = checkedCRD{existing: existing, result: res}
		}
	}
	return nil
}

// customResources lists the custom resources of every version served by both CRDs, as OLM
// does before an update. It lists in pages of customResourcePage: the API server refuses a
// list without a limit, 429 with Retry-After of a second or more, while its watch cache of the
// resource is starting — which the first request for a new CRD's resources starts, and
// another namespace's plan may have created the CRD moments ago (KEP-4568) — but serves a
// list with a limit from etcd meanwhile (TestCRDCheckListsAFreshCRDWithoutWaiting).
func (e *executor) customResources(ctx context.Context, existing, updated *apiextensionsv1.CustomResourceDefinition) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, v := range existing.Spec.Versions {
		if !v.Served || !servedIn(updated, v.Name) {
			continue
		}
		next := ""
		for {
			var list unstructured.UnstructuredList
			list.SetGroupVersionKind(schema.GroupVersionKind{Group: existing.Spec.Group, Version: v.Name, Kind: existing.Spec.Names.ListKind})
			if err := e.reader.List(ctx, &list, client.Limit(customResourcePage), client.Continue(next)); err != nil {
				return nil, fmt.Errorf("list %s %s: %w", existing.Spec.Names.Plural, v.Name, err)
			}
			out = append(out, list.Items...)
			if next = list.GetContinue(); next == "" {
				break
			}
		}
	}
	return out, nil
}

// customResourcePage is how many custom resources one request of the CRD check lists.
var customResourcePage int64 = 500

func servedIn(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			return v.Served
		}
	}
	return false
}

// InstalledAlongside is the annotation an InstallPlan puts on a CRD it applies for the CSV
// namespace/csv: operatorframework.io/installed-alongside-<hash of namespace/csv>.
func InstalledAlongside(namespace, csv string) (key, value string) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(namespace + "/" + csv))
	return fmt.Sprintf("%s%x", phase.InstalledAlongsidePrefix, h.Sum64()), namespace + "/" + csv
}

// withoutAlongside drops the installed-alongside annotations of CSVs of namespace: the CRD is
// now the version of the CSV applying it; other namespaces' annotations stay.
func withoutAlongside(annotations map[string]string, namespace string) map[string]string {
	out := map[string]string{}
	for k, v := range annotations {
		if strings.HasPrefix(k, phase.InstalledAlongsidePrefix) && strings.HasPrefix(v, namespace+"/") {
			continue
		}
		out[k] = v
	}
	return out
}
