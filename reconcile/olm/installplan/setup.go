package installplan

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// SetupWithManager builds the InstallPlan controller and registers it with the manager.
// Bundle images are pulled with images (its Cache shared with the catalog images); a pull
// that ends wakes the plans waiting for it.
func SetupWithManager(mgr ctrl.Manager, catalogs *catalogsource.Registry, images catalog.ImageOptions, opts Options) error {
	woken := make(chan event.TypedGenericEvent[*v1alpha1.InstallPlan], 1024)
	writer, err := NewWriter(mgr)
	if err != nil {
		return fmt.Errorf("installplan writer: %w", err)
	}
	r := &Reconciler{
		Client:    mgr.GetClient(),
		Writer:    writer,
		Scoped:    NewScopedClients(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()}),
		APIReader: mgr.GetAPIReader(),
		Mapper:    mgr.GetRESTMapper(),
		Catalogs:  catalogs,
		Unpacker: &Unpacker{
			Images:        images,
			RetryInterval: (&Reconciler{Options: opts}).retry(),
			Wake: func(plan types.NamespacedName) {
				ip := &v1alpha1.InstallPlan{}
				ip.Namespace, ip.Name = plan.Namespace, plan.Name
				select {
				case woken <- event.TypedGenericEvent[*v1alpha1.InstallPlan]{Object: ip}:
				default: // full: the plan is requeued on its own a moment later
				}
			},
		},
		Recorder: mgr.GetEventRecorder(ControllerName),
		Options:  opts,
	}
	metrics.InstallPlanCount.CountFrom(mgr.GetCache())
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.InstallPlan{}).
		WatchesRawSource(source.Channel(woken, &handler.TypedEnqueueRequestForObject[*v1alpha1.InstallPlan]{})).
		// The service-account query reads the namespace's OperatorGroups: a plan it held
		// goes on as soon as a group manages the namespace or finds its account.
		Watches(&operatorsv1.OperatorGroup{}, handler.EnqueueRequestsFromMapFunc(r.plansOfGroup)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, opts.MaxConcurrentReconciles)}).
		Complete(r)
}

// plansOfGroup are the plans of an OperatorGroup's namespace that are not done.
func (r *Reconciler) plansOfGroup(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1alpha1.InstallPlanList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		log.FromContext(ctx).Error(err, "list installplans of an operatorgroup's namespace")
		return nil
	}
	var out []reconcile.Request
	for _, ip := range list.Items {
		if ip.Status.Phase != v1alpha1.InstallPlanPhaseComplete && ip.Status.Phase != v1alpha1.InstallPlanPhaseFailed {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ip)})
		}
	}
	return out
}
