package operatorcondition

import (
	rbacv1 "k8s.io/api/rbac/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/reconcile/olm/written"
)

// SetupWithManager builds the OperatorCondition controller and registers it with the manager;
// writes are the manager's controllers' writes the cache may not show yet (nil for none).
func SetupWithManager(mgr ctrl.Manager, writes *written.Objects) error {
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Written: writes}
	return r.SetupWithManager(mgr)
}

// SetupWithManager registers the reconciler: OperatorConditions, the Roles and RoleBindings
// they control (as OLM's controller watches them: one deleted or changed is put back), and
// CSVs that are not copies (OLM's generator leaves copies out), each by its own name — the
// OperatorCondition's; a CSV only when created, deleted or its spec changed, not at each
// status write.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	notCopied := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		csv, ok := obj.(*v1alpha1.ClusterServiceVersion)
		return ok && !groups.IsCopied(csv)
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&operatorsv2.OperatorCondition{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		Watches(&v1alpha1.ClusterServiceVersion{}, &handler.EnqueueRequestForObject{},
			builder.WithPredicates(notCopied, predicate.GenerationChangedPredicate{})).
		Complete(r)
}
