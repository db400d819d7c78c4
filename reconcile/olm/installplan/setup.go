package installplan

import (
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
)

// SetupWithManager builds the InstallPlan controller and registers it with the manager.
func SetupWithManager(mgr ctrl.Manager, catalogs *catalogsource.Registry, opts Options) error {
	r := &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Mapper:    mgr.GetRESTMapper(),
		Catalogs:  catalogs,
		Recorder:  mgr.GetEventRecorder(ControllerName),
		Options:   opts,
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.InstallPlan{}).
		Complete(r)
}
