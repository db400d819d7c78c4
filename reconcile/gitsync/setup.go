package gitsync

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/runtime/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/reconcile/metrics"
)

// SetupWithManager builds the Sync reconciler on the manager's clients and registers it.
// rec records the Syncs' metrics; metrics.Default() in olmsync run.
func SetupWithManager(mgr ctrl.Manager, opts Options, rec *metrics.Recorder) (*Reconciler, error) {
	if opts.Check.PolicyCompiled == nil {
		// Every Sync's every revision is checked with the built-in rules, most with no
		// rules of their own: compile each set of rules once, not once a reconcile.
		opts.Check.PolicyCompiled = policy.NewCompileCache()
	}
	r := &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Config:    mgr.GetConfig(),
		Recorder:  mgr.GetEventRecorder(ControllerName),
		Metrics:   rec,
		Options:   opts,
		fetches:   newFetches(opts.MaxConcurrentFetches),
	}
	if err := mgr.Add(r.fetches); err != nil {
		return nil, err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &olmsyncv1alpha1.Sync{}, dependsOnIndex, dependsOnKeys); err != nil {
		return nil, fmt.Errorf("index syncs by dependsOn: %w", err)
	}
	workers := opts.MaxConcurrentReconciles
	if workers <= 0 {
		workers = DefaultMaxConcurrentReconciles
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		// A Sync's own status writes trigger nothing: a reconcile is due on a new spec, a
		// request, a deletion, and then on the interval the reconciler asks for.
		For(&olmsyncv1alpha1.Sync{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, reconcileRequested{}, deletionStarted{}))).
		// A Sync whose Ready changes wakes the Syncs that depend on it.
		Watches(&olmsyncv1alpha1.Sync{}, handler.EnqueueRequestsFromMapFunc(r.dependents),
			builder.WithPredicates(readyChanged{})).
		// A Sync whose fetch is done, off the workers, is reconciled again to take it.
		WatchesRawSource(source.Func(r.fetches.source)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
	return r, err
}

// reconcileRequested passes an update that changes the reconcile.olmsync.dev/requestedAt
// annotation: the webhook, `olmsync reconcile sync`, or anyone asking for a reconcile now.
type reconcileRequested struct{ predicate.Funcs }

func (reconcileRequested) Update(e event.UpdateEvent) bool {
	if e.ObjectOld == nil || e.ObjectNew == nil {
		return false
	}
	annotation := olmsyncv1alpha1.ReconcileRequestAnnotation
	v, ok := e.ObjectNew.GetAnnotations()[annotation]
	return ok && v != e.ObjectOld.GetAnnotations()[annotation]
}

// deletionStarted passes the update that marks a Sync for deletion, so that its finalizer
// runs at once.
type deletionStarted struct{ predicate.Funcs }

func (deletionStarted) Update(e event.UpdateEvent) bool {
	return e.ObjectOld != nil && e.ObjectNew != nil &&
		e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}

// readyChanged passes an update whose Ready condition changed status or observed
// generation: what a dependent Sync waits for.
type readyChanged struct{ predicate.Funcs }

func (readyChanged) Create(event.CreateEvent) bool { return true }
func (readyChanged) Delete(event.DeleteEvent) bool { return true }

func (readyChanged) Update(e event.UpdateEvent) bool {
	before, ok1 := e.ObjectOld.(*olmsyncv1alpha1.Sync)
	after, ok2 := e.ObjectNew.(*olmsyncv1alpha1.Sync)
	if !ok1 || !ok2 {
		return false
	}
	return conditions.IsReady(before) != conditions.IsReady(after) ||
		before.Status.ObservedGeneration != after.Status.ObservedGeneration
}
