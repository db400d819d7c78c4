package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/render"
)

// Action is what apply did to (or, in a dry run, would do to) one object.
type Action string

// The actions.
const (
	// Created: the object did not exist.
	Created Action = "Created"
	// Configured: the object existed and differed from Git (Result.Drift says where).
	Configured Action = "Configured"
	// Unchanged: the object matches Git; nothing was written.
	Unchanged Action = "Unchanged"
	// Waiting: the object's kind is not served yet and its CRD is on its way; nothing was
	// written (reason WaitingForCRD).
	Waiting Action = "Waiting"
	// Failed: the API server refused the object.
	Failed Action = "Failed"
	// Skipped: an earlier stage failed, so the object was not tried.
	Skipped Action = "Skipped"
)

// ObjectResult is the outcome for one object.
type ObjectResult struct {
	Entry  inventory.Entry
	Stage  Stage
	Action Action
	// Reason is PascalCase: WaitingForCRD, ApplyFailed, or empty.
	Reason  string
	Message string
	// Drift are the fields (dotted paths) where the live object differed from Git.
	Drift []string
	// Live is the object as the API server holds it after the apply: what it answered to
	// the write, or the object read when nothing was written. The health step reads it
	// instead of reading the object again. Nil when the object is not in the cluster (a
	// failure, a wait, or a creation in a dry run).
	Live *unstructured.Unstructured
	// DryRun is, in a dry run only (Applier.DryRun), the API server's answer to the dry-run
	// apply of an object that exists: the object as a real apply would leave it, which
	// Drift compared with Live. Nil otherwise (Apply does not keep it).
	DryRun *unstructured.Unstructured
}

// Result is the outcome of one Apply, object by object, in the order they were handled.
type Result struct {
	Objects []ObjectResult
	// DryRun is true when nothing was written.
	DryRun bool
}

// Applied is the inventory of the objects that are in the cluster as Git has them:
// created, configured or unchanged.
func (r *Result) Applied() *inventory.Inventory {
	inv := inventory.New()
	for _, o := range r.Objects {
		if o.Action == Created || o.Action == Configured || o.Action == Unchanged {
			inv.Add(o.Entry)
		}
	}
	return inv
}

// With returns the results with the given action.
func (r *Result) With(a Action) []ObjectResult {
	var out []ObjectResult
	for _, o := range r.Objects {
		if o.Action == a {
			out = append(out, o)
		}
	}
	return out
}

// Err is an *Error naming every object that failed, or nil.
func (r *Result) Err() error {
	failed := r.With(Failed)
	if len(failed) == 0 {
		return nil
	}
	return &Error{Failed: failed}
}

// Error says which objects the API server refused.
type Error struct {
	Failed []ObjectResult
}

func (e *Error) Error() string {
	return failedFor("apply", e.Failed, func(r ObjectResult) string { return r.Message })
}

// failedFor is the message of an *Error or a *PruneError: how many objects failed, and why.
func failedFor[T any](verb string, failed []T, message func(T) string) string {
	msgs := make([]string, 0, len(failed))
	for _, f := range failed {
		msgs = append(msgs, message(f))
	}
	return fmt.Sprintf("%s failed for %d object(s): %s", verb, len(failed), strings.Join(msgs, "; "))
}

// Applier applies and prunes the objects of one Sync.
type Applier struct {
	// Client talks to the API server as the Sync's service account, or as olmsync.
	Client client.Client
	// Owner is the Sync; its name and namespace go on every object as labels.
	Owner types.NamespacedName
	// CRDTimeout bounds the wait for the CRDs of the first stage to be established;
	// DefaultCRDTimeout when zero. A CRD still not established then leaves its custom
	// resources Waiting.
	CRDTimeout time.Duration
	// Promised reports whether the CRD of a kind the API server does not serve is on its
	// way, so that its custom resources wait instead of failing. Nil means PromisedBy of
	// the objects applied.
	Promised func(schema.GroupKind) bool
	// Concurrency is how many objects of one stage are applied at once;
	// DefaultConcurrency when zero. Stages still go one after the other.
	Concurrency int
	// DeleteInstalledCSVs makes Prune delete, with each Subscription it deletes, the CSV
	// that Subscription installed (a Sync's spec.pruneOptions.operators: Delete).
	DeleteInstalledCSVs bool
	// Force recreates an object whose change the API server refuses as immutable (a
	// Sync's spec.force); an object annotated ForceAnnotation is recreated whatever Force
	// says.
	Force bool
}

// ForceAnnotation, set to ForceEnabled on an object, lets the Applier recreate it when an
// immutable field changed (Flux's annotation, so the same manifests work in both).
const (
	ForceAnnotation = "kustomize.toolkit.fluxcd.io/force"
	ForceEnabled    = "enabled"
)

// DefaultConcurrency is how many objects of a stage an Applier applies at once. Each
// object costs a read and a dry run, and a write when it differs, so a stage of a hundred
// objects one at a time is a few hundred round trips in a row; Argo CD applies the
// objects of a sync wave in parallel likewise.
const DefaultConcurrency = 8

// DefaultCRDTimeout bounds the wait for applied CRDs to be established.
const DefaultCRDTimeout = 30 * time.Second

// PromisedBy is the default promise: a kind is on its way when the objects hold a
// Subscription, since olmsync cannot tell, before OLM resolves it, which CRDs the operator
// will bring. A kind nobody installs then shows as WaitingForCRD next to the
// Subscriptions' own health, rather than as a failure that the next reconcile would clear.
func PromisedBy(objs []*unstructured.Unstructured) func(schema.GroupKind) bool {
	subscribed := slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return kindOf(o) == subscriptionKind })
	return func(schema.GroupKind) bool { return subscribed }
}

// renderedKinds are the kinds the CRDs among objs define.
func renderedKinds(objs []*unstructured.Unstructured) map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for _, o := range objs {
		if kindOf(o) == crdKind {
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			out[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	return out
}

// ObjectsOf returns copies of rendered objects ready to apply: each in the namespace it
// lands in (render leaves metadata.namespace as Git wrote it).
func ObjectsOf(objs []*render.Object) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		u := o.Manifest.DeepCopy()
		u.SetNamespace(o.EffectiveNamespace)
		out = append(out, u)
	}
	return out
}

// Apply applies objs stage by stage and reports each. A failure in a stage leaves the
// later stages Skipped (their objects most likely need what failed); objects waiting for
// their CRD do not hold anything up. Only errors that concern no single object (the
// context ending) are returned; per-object failures are in the Result (see Result.Err).
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured) (*Result, error) {
	return a.run(ctx, objs, false)
}

// DryRun reports what Apply would do, writing nothing. Custom resources whose CRD is
// rendered but not yet applied show as Waiting.
func (a *Applier) DryRun(ctx context.Context, objs []*unstructured.Unstructured) (*Result, error) {
	return a.run(ctx, objs, true)
}

func (a *Applier) run(ctx context.Context, objs []*unstructured.Unstructured, dryRun bool) (*Result, error) {
	promised := a.Promised
	if promised == nil {
		promised = PromisedBy(objs)
	}
	// The kinds of the CRDs being applied are on their way whatever else is promised.
	rendered := renderedKinds(objs)
	promisedOrRendered := func(gk schema.GroupKind) bool { return rendered[gk] || promised(gk) }
	res := &Result{DryRun: dryRun}
	for _, stage := range Staged(objs) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if len(res.With(Failed)) > 0 {
			for _, obj := range stage {
				res.Objects = append(res.Objects, ObjectResult{Entry: inventory.EntryOf(obj), Stage: stageOf(obj), Action: Skipped,
					Message: fmt.Sprintf("%s not applied: an earlier stage failed", inventory.EntryOf(obj))})
			}
			continue
		}
		res.Objects = append(res.Objects, a.applyStage(ctx, stage, promisedOrRendered, dryRun)...)
		if !dryRun && len(res.With(Failed)) == 0 {
			a.waitForCRDs(ctx, stage)
		}
	}
	return res, ctx.Err()
}

// applyStage applies the objects of one stage, Concurrency at a time; the results keep
// the order of the objects.
func (a *Applier) applyStage(ctx context.Context, stage []*unstructured.Unstructured, promised func(schema.GroupKind) bool, dryRun bool) []ObjectResult {
	out := make([]ObjectResult, len(stage))
	limit := a.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	var g errgroup.Group
	g.SetLimit(limit)
	for i, obj := range stage {
		g.Go(func() error {
			out[i] = a.applyOne(ctx, obj, stageOf(obj), promised, dryRun)
			return nil
		})
	}
	_ = g.Wait() // applyOne reports failures in its result
	return out
}

// applyOne applies one object with Flux's server-side apply engine (fluxcd/pkg/ssa): a
// dry run first, compared with the live object as Flux compares it (ssa's normalisation,
// with driftIgnoreRules), and a real apply only when they differ; an
// immutable field is recreated under Force or ForceAnnotation, and the field managers of
// kubectl's client-side apply are handed over to olmsync's, as Flux does. In a dry run it
// says what the apply would do, writing nothing.
func (a *Applier) applyOne(ctx context.Context, obj *unstructured.Unstructured, stage Stage, promised func(schema.GroupKind) bool, dryRun bool) ObjectResult {
	entry := inventory.EntryOf(obj)
	out := ObjectResult{Entry: entry, Stage: stage}
	gvk := obj.GroupVersionKind()
	if _, err := a.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		if meta.IsNoMatchError(err) && promised(gvk.GroupKind()) {
			out.Action, out.Reason = Waiting, olmsyncv1alpha1.WaitingForCRDReason
			out.Message = fmt.Sprintf("%s waits for its CustomResourceDefinition: the API server does not serve %s yet", entry, gvk.GroupVersion().WithKind(gvk.Kind))
			return out
		}
		return failedResult(out, err)
	}

	desired := obj.DeepCopy()
	labels := desired.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[olmsyncv1alpha1.SyncNameLabel] = a.Owner.Name
	labels[olmsyncv1alpha1.SyncNamespaceLabel] = a.Owner.Namespace
	desired.SetLabels(labels)

	change, before, after, err := a.write(ctx, desired, dryRun)
	switch {
	case err != nil:
		return failedResult(out, err)
	case before == nil:
		out.Action, out.Live = Created, after
		out.Message = fmt.Sprintf("%s created", entry)
		return out
	case change.Action == ssa.UnchangedAction:
		out.Action, out.Live = Unchanged, before
		return out
	case change.Action == ssa.CreatedAction:
		out.Drift = []string{"an immutable field"}
		out.Message = fmt.Sprintf("%s recreated: an immutable field changed", entry)
		if dryRun {
			out.Message = fmt.Sprintf("%s would be recreated: an immutable field changed", entry)
		}
	default:
		// An apply that changed only who manages the fields (kubectl's handed over) changed none.
		out.Drift = Drift(before, after)
		out.Message = fmt.Sprintf("%s configured: %s differed from Git", entry, cmp.Or(strings.Join(out.Drift, ", "), "its field managers"))
	}
	out.Action, out.Live = Configured, after
	if dryRun {
		out.Live, out.DryRun = before, after
	}
	return out
}

// write hands desired to ssa: Apply, or in a dry run Diff. before is the object as the
// API server held it (nil when there was none), after as it holds it after the apply, or
// would in a dry run (nil when nothing was written). ssa returns neither, so both come from
// the API server's answers to ssa's own read and write (a recorder) instead of reading the
// object again: a changed object costs a read, a dry run and the apply.
func (a *Applier) write(ctx context.Context, desired *unstructured.Unstructured, dryRun bool) (change *ssa.ChangeSetEntry, before, after *unstructured.Unstructured, err error) {
	seen := &recorder{Client: a.Client}
	if !dryRun {
		change, err = manager(seen).Apply(ctx, desired, a.applyOptions())
		if err == nil && change.Action != ssa.UnchangedAction && seen.applied == nil {
			err = errors.New("the API server's answer to the apply was not seen")
		}
		return change, seen.live, seen.applied, err
	}
	change, before, after, err = manager(seen).Diff(ctx, desired.DeepCopy(), ssa.DiffOptions{
		Force: a.Force, ForceSelector: forceSelector, DriftIgnoreRules: driftIgnoreRules,
	})
	switch {
	case seen.readErr != nil: // which ssa's Diff drops
		return nil, nil, nil, seen.readErr
	case seen.live == nil:
		// Created, whatever the dry run said: its namespace may be one this dry run creates too.
		return change, nil, nil, nil
	case err != nil:
		return nil, nil, nil, err
	case change.Action == ssa.ConfiguredAction:
		return change, before, after, nil // ssa's sides: ignored fields left out, a Secret's values masked
	}
	return change, seen.live, desired, nil // unchanged, or to be recreated: ssa's Diff gives neither side
}

// forceSelector is Flux's per-object force: an object annotated
// kustomize.toolkit.fluxcd.io/force: enabled is recreated when an immutable field changed.
var forceSelector = map[string]string{ForceAnnotation: ForceEnabled}

// applyOptions are the ssa options of every apply: Force from the Sync, the force
// annotation, the fields OLM rewrites left out of drift, and kubectl's client-side apply
// managers and annotation handed over to olmsync's field manager, as Flux does.
func (a *Applier) applyOptions() ssa.ApplyOptions {
	opts := ssa.DefaultApplyOptions()
	opts.Force = a.Force
	opts.ForceSelector = forceSelector
	opts.DriftIgnoreRules = driftIgnoreRules
	opts.Cleanup = ssa.ApplyCleanupOptions{
		Annotations: []string{corev1.LastAppliedConfigAnnotation},
		FieldManagers: []ssa.FieldManager{
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
		},
	}
	return opts
}

// failedResult says why the object failed, naming it once: ssa's errors begin with the
// object in Flux's form (Kind/namespace/name), which gives way to olmsync's.
func failedResult(out ObjectResult, err error) ObjectResult {
	out.Action, out.Reason, out.Live = Failed, olmsyncv1alpha1.ApplyFailedReason, nil
	e := out.Entry
	flux := utils.FmtObjMetadata(object.ObjMetadata{Namespace: e.Namespace, Name: e.Name, GroupKind: e.GroupKind()})
	if rest, ok := strings.CutPrefix(err.Error(), flux+" "); ok {
		out.Message = fmt.Sprintf("%s %s", e, rest)
	} else {
		out.Message = fmt.Sprintf("%s: %v", e, err)
	}
	return out
}

// waitForCRDs waits, with Flux's kstatus wait, until every CRD of the stage is established,
// the timeout passes (the custom resources of a CRD still not established then wait, and
// the next reconcile looks again) or the context ends (which Apply then returns).
func (a *Applier) waitForCRDs(ctx context.Context, stage []*unstructured.Unstructured) {
	crds := slices.DeleteFunc(slices.Clone(stage), func(o *unstructured.Unstructured) bool { return kindOf(o) != crdKind })
	if len(crds) == 0 {
		return // most stages: no poller to build
	}
	rm := ssa.NewResourceManager(a.Client, polling.NewStatusPoller(a.Client, a.Client.RESTMapper(), polling.Options{}), fieldOwner)
	_ = rm.WaitForSetWithContext(ctx, object.UnstructuredSetToObjMetadataSet(crds), ssa.WaitOptions{
		Interval: 100 * time.Millisecond, Timeout: cmp.Or(a.CRDTimeout, DefaultCRDTimeout),
	})
}

// fieldOwner is olmsync's field manager, as ssa names it.
var fieldOwner = ssa.Owner{Field: olmsyncv1alpha1.FieldManager, Group: olmsyncv1alpha1.GroupName}

// manager is Flux's server-side apply engine talking through c.
func manager(c client.Client) *ssa.ResourceManager {
	return ssa.NewResourceManager(c, nil, fieldOwner)
}

// recorder is a client through which one object is applied: it keeps what the API server
// answered to ssa's first read of the object (live, nil when there was none; readErr, an
// error other than not found, which ssa's Diff does not return) and to the real apply
// (nil when nothing was written).
type recorder struct {
	client.Client
	read          bool
	live, applied *unstructured.Unstructured
	readErr       error
}

func (r *recorder) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.Client.Get(ctx, key, obj, opts...)
	if u, ok := obj.(*unstructured.Unstructured); ok && !r.read {
		r.read = true
		switch {
		case err == nil:
			r.live = u.DeepCopy()
		case !apierrors.IsNotFound(err):
			r.readErr = err
		}
	}
	return err
}

func (r *recorder) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	err := r.Client.Patch(ctx, obj, patch, opts...)
	po := (&client.PatchOptions{}).ApplyOptions(opts)
	if u, ok := obj.(*unstructured.Unstructured); ok && err == nil && patch.Type() == types.ApplyPatchType && len(po.DryRun) == 0 {
		r.applied = u.DeepCopy()
	}
	return err
}
