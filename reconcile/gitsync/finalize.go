package gitsync

import (
	"context"
	"errors"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/inventory"
)

// finalize runs when a Sync is deleted. With spec.prune (and not suspended) it deletes
// every object of the inventory, with prune's care — only objects still labelled as the
// Sync's and not opted out, custom resources before the Subscriptions whose operators
// serve them, Namespaces last — and lets the Sync go once none failed. Otherwise, as
// Flux's Kustomization does, the objects stay in the cluster.
func (r *Reconciler) finalize(ctx context.Context, obj *olmsyncv1alpha1.Sync) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	if obj.Spec.Prune && !obj.Spec.Suspend && obj.Status.Inventory != nil {
		if done, err := r.pruneAll(ctx, obj); !done {
			return ctrl.Result{RequeueAfter: r.retryInterval(obj)}, err
		}
	}
	controllerutil.RemoveFinalizer(obj, Finalizer)
	r.forget(key(obj))
	r.Metrics.Forget(obj)
	remotes.forget(obj.UID)
	return ctrl.Result{}, nil
}

// pruneAll deletes the inventory. It reports false while a deletion failed (the Sync then
// stays, PruneFailed says why, and it is tried again). An inventory that cannot be read,
// or an account that is gone, cannot be pruned as the Sync asked: the objects are left,
// and an Event says so.
func (r *Reconciler) pruneAll(ctx context.Context, obj *olmsyncv1alpha1.Sync) (bool, error) {
	inv, err := inventory.FromStatus(obj.Status.Inventory)
	if err != nil {
		r.warn(obj, "PruneSkipped", "objects left in the cluster: "+err.Error())
		return true, nil
	}
	c, err := r.clientFor(ctx, obj)
	var w *waitError
	if errors.As(err, &w) {
		r.warn(obj, "PruneSkipped", "objects left in the cluster: "+w.msg)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	// Deleting the Sync deletes everything it applied, on purpose: no guard.
	stale, err := inv.Stale(inventory.DesiredOf(nil, nil, nil), inventory.Guard{AllowEmpty: true})
	if err != nil {
		return false, err
	}
	results, err := r.applier(obj, c).Prune(ctx, stale)
	deleted := 0
	for _, res := range results {
		if res.Action == apply.Deleted {
			deleted++
		}
	}
	r.Metrics.RecordPruned(obj, deleted)
	var pruneErr *apply.PruneError
	if errors.As(err, &pruneErr) {
		conditions.MarkTrue(obj, olmsyncv1alpha1.PruneFailedCondition, olmsyncv1alpha1.PruneFailedReason, "%s", err)
		conditions.MarkFalse(obj, olmsyncv1alpha1.ReadyCondition, olmsyncv1alpha1.PruneFailedReason, "deleting: %s", err)
		return false, nil
	}
	return err == nil, err
}

func (r *Reconciler) warn(obj *olmsyncv1alpha1.Sync, reason, msg string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, reason, "Finalize", "%s", msg)
	}
}
