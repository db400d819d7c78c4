package gitsync

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/jitter"
	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/reconcile/metrics"
	"github.com/olmsync/olmsync/sources"
)

// ControllerName names the controller, its logger and the source of its Events.
const ControllerName = "sync"

// Finalizer keeps a Sync until what it applied is pruned (spec.prune) or left in place.
const Finalizer = "olmsync.dev/finalizer"

// Defaults of Options.
const (
	DefaultRetryInterval      = 30 * time.Second
	DefaultHealthPollInterval = 5 * time.Second
	// DefaultMaxConcurrentReconciles is how many Syncs are reconciled at once unless
	// Options say otherwise (4, as Flux's controllers).
	DefaultMaxConcurrentReconciles = 4
)

// Options configure the Sync reconciler.
type Options struct {
	// CacheDir keeps one bare repository per URL; a restarted olmsync with the same folder
	// still has every revision it fetched (the last good one among them).
	CacheDir string
	// AllowLocalSources lets Syncs use file:// URLs. Off by default: in a cluster, a file
	// URL reads olmsync's own filesystem.
	AllowLocalSources bool
	// Check says what kustomize may do beyond reading the repository; everything that
	// runs code or reaches the network is off in the zero value.
	Check check.Options
	// HTTPClient posts commit statuses (spec.notify); http.DefaultClient when nil.
	HTTPClient *http.Client
	// StrictSubstitute makes a ${var} of spec.postBuild with no value and no default fail
	// the build instead of becoming empty (Flux's StrictPostBuildSubstitutions).
	StrictSubstitute bool
	// RetryInterval is how soon a Sync whose fetch, build, apply or prune failed is tried
	// again (at most its own requeue interval); DefaultRetryInterval when zero.
	RetryInterval time.Duration
	// HealthPollInterval is how soon health is looked at again while an object is still
	// on its way (a Subscription resolving, a CSV installing, a CRD awaited);
	// DefaultHealthPollInterval when zero.
	HealthPollInterval time.Duration
	// CRDTimeout bounds the wait for applied CRDs to be established (apply's default when 0).
	CRDTimeout time.Duration
	// MaxConcurrentReconciles is how many Syncs are reconciled at once
	// (DefaultMaxConcurrentReconciles when 0).
	MaxConcurrentReconciles int
	// MaxConcurrentFetches is the fetch slots, off the reconcile workers
	// (DefaultMaxConcurrentFetches when 0): a fetch holds one for 10 s at most; a quarter
	// as many fetches of one server run at once, and a slow lane of a quarter as many slots
	// serves the Syncs whose last fetch was slow.
	MaxConcurrentFetches int
	// Selector, when set, is the label selector of this shard's Syncs (olmsync run
	// --watch-label-selector): the manager's cache holds only those, and a Sync read that no
	// longer matches (relabelled into another shard) is left to that shard.
	Selector labels.Selector
}

// Reconciler reconciles Syncs: fetch → build → apply → prune → health.
type Reconciler struct {
	// Client writes Syncs' status and finalizers, applies for Syncs without a service
	// account, and reads the OLM objects health looks up. Unstructured objects are read
	// past its cache.
	Client client.Client
	// APIReader reads Syncs, Secrets and ServiceAccounts past the cache: a status patch
	// computed against a stale copy cannot clear a field, and Secrets are not cached.
	APIReader client.Reader
	// Config is the manager's config, from which a service account is impersonated.
	Config   *rest.Config
	Recorder events.EventRecorder
	Metrics  *metrics.Recorder
	Options  Options

	memory  memory
	fetches *fetches
	now     func() time.Time
	// afterApply, set by tests only, runs right after an apply and before anything of it
	// is written to the Sync's status: where a crash leaves applied objects that the
	// status never recorded.
	afterApply func(obj *olmsyncv1alpha1.Sync, revision string)
}

// pass is what one reconcile learns, step by step.
type pass struct {
	// patcher writes the status mid-way, before slow work.
	patcher *patch.SerialPatcher
	// client applies, prunes and reads health, as the Sync's service account or olmsync.
	client client.Client
	// previous is the inventory before this reconcile.
	previous *inventory.Inventory
	// req is the fetch spec.source makes; fetched its outcome, tree what it read.
	req     sources.FetchRequest
	fetched fetchOutcome
	tree    *sources.Tree
	// fetching: the fetch is under way; this reconcile ends and the next takes it.
	fetching bool
	// fetchErr is the fetch's error when tree is the last good revision from the cache.
	fetchErr error
	// last is what the reconciler remembers of the Sync's last apply; due says whether
	// this reconcile applies (see applyDue) or only looks at health.
	last *lastApply
	due  bool
	// build, applied: this reconcile's, or the last apply's when it was not due.
	build   *Build
	applied *apply.Result
	// appliedNow: apply ran in this reconcile (applied holds the API server's answers).
	appliedNow bool
	states     []objectState
	health     healthSummary
	// failed: a step failed; the Sync is retried at the retry interval.
	failed bool
}

type step func(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass) error

// Reconcile brings one Sync's cluster in step with its repository.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	start := r.clock()
	obj := &olmsyncv1alpha1.Sync{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.inShard(obj) {
		// Relabelled into another shard: the cache saw it leave, and that shard's manager
		// reconciles it from now on.
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	patcher := patch.NewSerialPatcher(obj, r.Client)
	readyBefore := conditions.Get(obj, olmsyncv1alpha1.ReadyCondition).DeepCopy()

	if !obj.DeletionTimestamp.IsZero() {
		defer func() { retErr = r.patch(ctx, obj, patcher, retErr) }()
		return r.finalize(ctx, obj)
	}
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		// Before anything is applied, so that nothing is applied that deleting the Sync
		// would not prune.
		controllerutil.AddFinalizer(obj, Finalizer)
		if err := patcher.Patch(ctx, obj); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}
	var p *pass
	defer func() {
		if p != nil && p.fetching {
			// Nothing of this pass is news: the reconcile that takes the fetch's
			// outcome tells what came of it.
			retErr = r.patch(ctx, obj, patcher, retErr)
			return
		}
		obj.Status.ObservedGeneration = obj.Generation
		obj.Status.LastHandledReconcileAt = requestedAt(obj)
		r.recordHistory(obj, p, start, readyBefore)
		retErr = r.patch(ctx, obj, patcher, retErr)
		r.event(obj, readyBefore)
		r.Metrics.RecordReconcile(obj, start)
	}()
	if obj.Spec.Suspend {
		r.fetches.forget(req.NamespacedName)
		conditions.MarkFalse(obj, olmsyncv1alpha1.ReadyCondition, olmsyncv1alpha1.SuspendedReason, "reconciliation is suspended")
		conditions.Delete(obj, olmsyncv1alpha1.ReconcilingCondition)
		return ctrl.Result{}, nil
	}
	if r.newWork(obj) {
		conditions.MarkReconciling(obj, olmsyncv1alpha1.ProgressingReason, "reconciling generation %d", obj.Generation)
		if err := patcher.Patch(ctx, obj, ownedConditions); err != nil {
			return ctrl.Result{}, fmt.Errorf("patch status: %w", err)
		}
	}
	p = &pass{patcher: patcher, last: r.memory.get(req.NamespacedName)}
	err := r.run(ctx, obj, p, []step{r.dependencies, r.fetch, r.build, r.apply, r.prune, r.checkHealth})
	if errors.Is(err, errFetching) {
		p.fetching = true
		return ctrl.Result{}, nil // the fetch puts the Sync back on the queue when it is done
	}
	res, err := r.result(ctx, obj, p, err)
	r.notify(ctx, obj, p)
	return res, err
}

// forget drops what the reconciler keeps of a Sync that is gone or another shard's: its
// last apply and its fetch.
func (r *Reconciler) forget(k types.NamespacedName) {
	r.memory.forget(k)
	r.fetches.forget(k)
}

// inShard reports whether obj is one of this manager's Syncs (all without a selector).
func (r *Reconciler) inShard(obj *olmsyncv1alpha1.Sync) bool {
	sel := r.Options.Selector
	return sel == nil || sel.Matches(labels.Set(obj.Labels))
}

// run runs the steps in order until one ends the pipeline.
func (r *Reconciler) run(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass, steps []step) error {
	var err error
	if p.previous, err = inventory.FromStatus(obj.Status.Inventory); err != nil {
		return stalled(olmsyncv1alpha1.InvalidSpecReason, "status.inventory cannot be read, so nothing is applied or pruned: %v", err)
	}
	for _, s := range steps {
		if err := s(ctx, obj, p); err != nil {
			return err
		}
	}
	return nil
}

// result turns the pipeline's end into Ready and the next reconcile: a stalled spec waits
// for a change, a failure for the retry interval, objects on their way for the health
// poll, and a Sync in step for its interval (jittered, as Flux does).
func (r *Reconciler) result(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass, err error) (ctrl.Result, error) {
	var st *stalledError
	var w *waitError
	switch {
	case errors.As(err, &st):
		conditions.MarkStalled(obj, st.reason, "%s", st.msg)
		summarize(obj, p.health, "")
		return ctrl.Result{}, reconcile.TerminalError(err)
	case errors.As(err, &w):
		log.FromContext(ctx).Info("reconcile waits", "reason", w.msg)
		p.failed = true
		if p.last != nil && !p.appliedNow {
			// The pipeline ended before it applied, on a condition that only an apply
			// clears (spec.path's folder gone, the service account missing). Once the
			// cause is gone the revision may be the last applied one again: apply it at
			// the next reconcile rather than reuse the last apply until the interval.
			p.last.retry = true
		}
	case err != nil:
		return ctrl.Result{}, err
	}
	conditions.Delete(obj, olmsyncv1alpha1.StalledCondition)
	revision := obj.Status.LastAppliedRevision
	if p.tree != nil {
		revision = p.tree.Revision
	}
	summarize(obj, p.health, revision)
	every := obj.GetRequeueAfter()
	switch {
	case p.failed || conditions.IsFalse(obj, olmsyncv1alpha1.ReadyCondition) && !p.health.settling():
		return ctrl.Result{RequeueAfter: min(r.retryInterval(obj), every)}, nil
	case p.health.settling():
		return ctrl.Result{RequeueAfter: min(r.healthPollInterval(), every)}, nil
	}
	return ctrl.Result{RequeueAfter: jitter.JitteredIntervalDuration(every)}, nil
}

// ownedConditions are every condition the reconciler writes; the patch helper then
// writes them as they are, whatever a stale read showed.
var ownedConditions = patch.WithOwnedConditions{Conditions: append([]string{
	olmsyncv1alpha1.ReadyCondition, olmsyncv1alpha1.ReconcilingCondition, olmsyncv1alpha1.StalledCondition,
}, failureConditions...)}

// patch writes the Sync's status and finalizers; a Sync already gone is no error.
func (r *Reconciler) patch(ctx context.Context, obj *olmsyncv1alpha1.Sync, patcher *patch.SerialPatcher, retErr error) error {
	err := patcher.Patch(ctx, obj, ownedConditions, patch.WithFieldOwner(olmsyncv1alpha1.FieldManager))
	if err != nil && !apierrors.IsNotFound(err) {
		return kerrors.NewAggregate([]error{retErr, fmt.Errorf("patch sync %s/%s: %w", obj.Namespace, obj.Name, err)})
	}
	return retErr
}

// newWork reports whether this reconcile does something the status does not show yet: a
// new generation, a requested reconcile, or a first one.
func (r *Reconciler) newWork(obj *olmsyncv1alpha1.Sync) bool {
	return obj.Generation != obj.Status.ObservedGeneration || requestedAt(obj) != obj.Status.LastHandledReconcileAt ||
		conditions.Get(obj, olmsyncv1alpha1.ReadyCondition) == nil
}

// requestedAt is the value of the reconcile-request annotation.
func requestedAt(obj *olmsyncv1alpha1.Sync) string {
	return obj.GetAnnotations()[olmsyncv1alpha1.ReconcileRequestAnnotation]
}

// event records a change of Ready as an Event: a Warning when the Sync is not Ready, with
// the revision. Nothing is recorded when Ready says what it said before.
func (r *Reconciler) event(obj *olmsyncv1alpha1.Sync, before *metav1.Condition) {
	after := conditions.Get(obj, olmsyncv1alpha1.ReadyCondition)
	if r.Recorder == nil || after == nil || (before != nil && before.Status == after.Status && before.Reason == after.Reason && before.Message == after.Message) {
		return
	}
	if after.Status == metav1.ConditionUnknown {
		return // under way: the Event comes when it ends
	}
	eventType := corev1.EventTypeNormal
	if after.Status == metav1.ConditionFalse && after.Reason != olmsyncv1alpha1.SuspendedReason {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(obj, nil, eventType, after.Reason, "Reconcile", "%s", after.Message)
}

func (r *Reconciler) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// retryInterval is how long a failed reconcile waits: spec.retryInterval, else the
// reconciler's.
func (r *Reconciler) retryInterval(obj *olmsyncv1alpha1.Sync) time.Duration {
	if obj != nil && obj.Spec.RetryInterval != nil && obj.Spec.RetryInterval.Duration > 0 {
		return obj.Spec.RetryInterval.Duration
	}
	if r.Options.RetryInterval > 0 {
		return r.Options.RetryInterval
	}
	return DefaultRetryInterval
}

func (r *Reconciler) healthPollInterval() time.Duration {
	if r.Options.HealthPollInterval > 0 {
		return r.Options.HealthPollInterval
	}
	return DefaultHealthPollInterval
}

func key(obj *olmsyncv1alpha1.Sync) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
}
