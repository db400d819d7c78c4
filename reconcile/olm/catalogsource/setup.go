package catalogsource

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// SetupWithManager builds the CatalogSource controller over registry and registers it.
func SetupWithManager(mgr ctrl.Manager, registry *Registry, opts Options) error {
	r := &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Registry:  registry,
		Recorder:  mgr.GetEventRecorder(ControllerName),
		Options:   opts,
	}
	return r.SetupWithManager(mgr)
}

// SetupWithManager registers the reconciler. CatalogSources are reconciled when their spec
// changes (their own status writes do not trigger another load; polls are timed) and when the
// ConfigMap of a ConfigMap catalog changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	metrics.CatalogSourceCount.CountFrom(mgr.GetCache())
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.CatalogSource{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.sourcesOfConfigMap)).
		Complete(r)
}

// sourcesOfConfigMap are the ConfigMap catalogs of the ConfigMap's namespace that read it.
func (r *Reconciler) sourcesOfConfigMap(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1alpha1.CatalogSourceList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		log.FromContext(ctx).Error(err, "list catalog sources of a configmap")
		return nil
	}
	var out []reconcile.Request
	for _, cs := range list.Items {
		if cs.Spec.ConfigMap == obj.GetName() && (cs.Spec.SourceType == v1alpha1.SourceTypeConfigmap || cs.Spec.SourceType == v1alpha1.SourceTypeInternal) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&cs)})
		}
	}
	return out
}
