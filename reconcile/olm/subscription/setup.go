package subscription

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// SetupWithManager builds the Subscription controller and registers it with the manager.
// Its requests name a namespace (Name is empty): every Subscription, InstallPlan, CSV and
// OperatorGroup event queues its namespace, and a CatalogSource event queues its namespace
// or, for a global catalog, every namespace with Subscriptions.
func SetupWithManager(mgr ctrl.Manager, catalogs Catalogs, opts Options) error {
	r := &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Catalogs:  catalogs,
		Recorder:  mgr.GetEventRecorder(ControllerName),
		Options:   opts,
	}
	metrics.SubscriptionCount.CountFrom(mgr.GetCache())
	byNamespace := handler.EnqueueRequestsFromMapFunc(namespaceOf)
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&v1alpha1.Subscription{}, byNamespace).
		Watches(&v1alpha1.InstallPlan{}, byNamespace).
		Watches(&v1alpha1.ClusterServiceVersion{}, byNamespace).
		Watches(&operatorsv1.OperatorGroup{}, byNamespace).
		Watches(&v1alpha1.CatalogSource{}, handler.EnqueueRequestsFromMapFunc(r.namespacesSeeing)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, opts.MaxConcurrentReconciles)}).
		Complete(r)
}

func namespaceOf(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace()}}}
}

// namespacesSeeing queues the namespaces that see a CatalogSource: its own, and for one in
// the global catalog namespace every namespace that has a Subscription.
func (r *Reconciler) namespacesSeeing(ctx context.Context, obj client.Object) []reconcile.Request {
	if g := r.Options.GlobalCatalogNamespace; g == "" || obj.GetNamespace() != g {
		return namespaceOf(ctx, obj)
	}
	var subs v1alpha1.SubscriptionList
	if err := r.Client.List(ctx, &subs, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list subscriptions for a global catalog change")
		return nil
	}
	seen := map[string]bool{}
	var out []reconcile.Request
	for i := range subs.Items {
		if ns := subs.Items[i].Namespace; !seen[ns] {
			seen[ns] = true
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns}})
		}
	}
	return out
}
