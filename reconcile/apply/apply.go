package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
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
	msgs := make([]string, 0, len(e.Failed))
	for _, f := range e.Failed {
		msgs = append(msgs, f.Message)
	}
	return fmt.Sprintf("apply failed for %d object(s): %s", len(e.Failed), strings.Join(msgs, "; "))
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
	subscribed := false
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: olmGroup, Kind: "Subscription"}) {
			subscribed = true
			break
		}
	}
	return func(schema.GroupKind) bool { return subscribed }
}

// renderedKinds are the kinds the CRDs among objs define.
func renderedKinds(objs []*unstructured.Unstructured) map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: crdGroup, Kind: "CustomResourceDefinition"}) {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		out[schema.GroupKind{Group: group, Kind: kind}] = true
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
	failed := false
	for _, stage := range Staged(objs) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if failed {
			for _, obj := range stage {
				st, _ := StageOf(obj.GroupVersionKind().GroupKind())
				res.Objects = append(res.Objects, ObjectResult{Entry: inventory.EntryOf(obj), Stage: st, Action: Skipped,
					Message: fmt.Sprintf("%s not applied: an earlier stage failed", inventory.EntryOf(obj))})
			}
			continue
		}
		res.Objects = append(res.Objects, a.applyStage(ctx, stage, promisedOrRendered, dryRun)...)
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if len(res.With(Failed)) > 0 {
			failed = true
			continue
		}
		if !dryRun {
			if err := a.waitForCRDs(ctx, stage); err != nil {
				return res, err
			}
		}
	}
	return res, nil
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
			st, _ := StageOf(obj.GroupVersionKind().GroupKind())
			out[i] = a.applyOne(ctx, obj, st, promised, dryRun)
			return nil
		})
	}
	_ = g.Wait() // applyOne reports failures in its result
	return out
}

// applyOne applies one object: a dry run first, and a real apply only when the dry run
// differs from the live object.
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

	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	err := a.Client.Get(ctx, client.ObjectKeyFromObject(obj), live)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return failedResult(out, err)
	}

	if exists {
		trial := desired.DeepCopy()
		if err := a.ssa(ctx, trial, true); err != nil {
			if isImmutable(err) && (a.Force || obj.GetAnnotations()[ForceAnnotation] == ForceEnabled) {
				return a.recreate(ctx, out, live, desired, err, dryRun)
			}
			return failedResult(out, err)
		}
		out.Drift = Drift(live, trial)
		out.Live = live
		if dryRun {
			out.DryRun = trial
		}
		if len(out.Drift) == 0 {
			out.Action = Unchanged
			return out
		}
	}
	if !dryRun {
		if err := a.ssa(ctx, desired, false); err != nil {
			return failedResult(out, err)
		}
		out.Live = desired // the apply decoded the server's answer into it
	}
	if exists {
		out.Action = Configured
		out.Message = fmt.Sprintf("%s configured: %s differed from Git", entry, strings.Join(out.Drift, ", "))
	} else {
		out.Action = Created
		out.Message = fmt.Sprintf("%s created", entry)
	}
	return out
}

// recreate deletes live and applies desired in its place: the change of an immutable field
// cannot be made any other way (Flux's force). In a dry run it only says so.
func (a *Applier) recreate(ctx context.Context, out ObjectResult, live, desired *unstructured.Unstructured, cause error, dryRun bool) ObjectResult {
	out.Drift = []string{"an immutable field"}
	out.Live = live
	out.Action = Configured
	out.Message = fmt.Sprintf("%s recreated: %v", out.Entry, cause)
	if dryRun {
		out.DryRun = desired
		out.Message = fmt.Sprintf("%s would be recreated: %v", out.Entry, cause)
		return out
	}
	if err := a.Client.Delete(ctx, live, client.Preconditions{UID: ptr.To(live.GetUID())},
		client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return failedResult(out, fmt.Errorf("recreate: delete: %w", err))
	}
	if err := a.ssa(ctx, desired, false); err != nil {
		return failedResult(out, fmt.Errorf("recreate: %w", err))
	}
	out.Live = desired
	return out
}

// isImmutable reports whether the API server refused a change because the field may not
// change after creation.
func isImmutable(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "field is immutable") || strings.Contains(msg, "cannot change roleRef") ||
		strings.Contains(msg, "may not change once set")
}

func (a *Applier) ssa(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	opts := []client.ApplyOption{client.FieldOwner(olmsyncv1alpha1.FieldManager), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	return a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...)
}

func failedResult(out ObjectResult, err error) ObjectResult {
	out.Action, out.Reason, out.Live = Failed, olmsyncv1alpha1.ApplyFailedReason, nil
	out.Message = fmt.Sprintf("%s: %v", out.Entry, err)
	return out
}

// waitForCRDs waits until every CRD of the stage is established (or the timeout passes:
// the custom resources of a CRD still not established then wait, and the next reconcile
// looks again).
func (a *Applier) waitForCRDs(ctx context.Context, stage []*unstructured.Unstructured) error {
	var names []string
	for _, o := range stage {
		if o.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: crdGroup, Kind: "CustomResourceDefinition"}) {
			names = append(names, o.GetName())
		}
	}
	if len(names) == 0 {
		return nil
	}
	timeout := a.CRDTimeout
	if timeout <= 0 {
		timeout = DefaultCRDTimeout
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			crd := &unstructured.Unstructured{}
			crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			if err := a.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if !established(crd) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil // not established in time: their custom resources wait
	}
	return err
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == string(apiextensionsv1.Established) && m["status"] == string(apiextensionsv1.ConditionTrue) {
			return true
		}
	}
	return false
}
