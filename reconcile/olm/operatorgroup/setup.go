package operatorgroup

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// indexOwner indexes a ClusterRole by the OperatorGroup its owner labels name
// (groups.OwnerKey): a group's roles are found among every group's without matching the
// labels of each.
const indexOwner = "olmsync.operatorgroup.owner"

// ownerOfClusterRole is indexOwner's value: the key of the OperatorGroup that owns the
// ClusterRole, none when a group does not.
func ownerOfClusterRole(o client.Object) []string {
	return groups.OwnerKeysOf(operatorsv1.OperatorGroupKind, o.GetLabels())
}

// SetupWithManager builds the OperatorGroup controller and registers it with the manager.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	r := &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder(ControllerName),
		Options:   opts,
	}
	return r.SetupWithManager(mgr)
}

// SetupWithManager registers the reconciler with the manager. Besides groups it watches
// Namespaces (their labels and existence change selector targets), CSVs (their APIs and phases
// drive the pruning of olm.providedAPIs), ServiceAccounts (a group's missing one appearing) and
// the group ClusterRoles.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &rbacv1.ClusterRole{}, indexOwner, ownerOfClusterRole); err != nil {
		return fmt.Errorf("operatorgroup controller: index %s: %w", indexOwner, err)
	}
	r.ownerIndexed = true
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&operatorsv1.OperatorGroup{}).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.groupsOfNamespace),
			builder.WithPredicates(namespaceChanged())).
		Watches(&v1alpha1.ClusterServiceVersion{}, handler.EnqueueRequestsFromMapFunc(r.groupsInNamespace),
			builder.WithPredicates(csvChanged())).
		Watches(&corev1.ServiceAccount{}, handler.EnqueueRequestsFromMapFunc(r.groupsOfServiceAccount)).
		Watches(&rbacv1.ClusterRole{}, handler.EnqueueRequestsFromMapFunc(groupOfClusterRole)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.Options.MaxConcurrentReconciles)}).
		Complete(r)
}

// namespaceChanged lets through a namespace's creation and deletion and changes of its labels.
func namespaceChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
		},
	}
}

// csvChanged lets through the creation and deletion of a CSV that is not a copy, and changes of
// its phase or of the APIs it provides.
func csvChanged() predicate.Funcs {
	local := func(o client.Object) bool {
		csv, ok := o.(*v1alpha1.ClusterServiceVersion)
		return ok && !groups.IsCopied(csv)
	}
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return local(e.Object) },
		DeleteFunc: func(e event.DeleteEvent) bool { return local(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			older, ok1 := e.ObjectOld.(*v1alpha1.ClusterServiceVersion)
			newer, ok2 := e.ObjectNew.(*v1alpha1.ClusterServiceVersion)
			return ok1 && ok2 && local(newer) &&
				(older.Status.Phase != newer.Status.Phase || older.Generation != newer.Generation ||
					!newer.DeletionTimestamp.Equal(older.DeletionTimestamp))
		},
	}
}

// groupsOfNamespace maps a namespace to the groups that select namespaces by label, and to the
// groups in it.
func (r *Reconciler) groupsOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	var list operatorsv1.OperatorGroupList
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list operatorgroups")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		og := &list.Items[i]
		if og.Namespace == obj.GetName() || (len(og.Spec.TargetNamespaces) == 0 && og.Spec.Selector != nil) {
			out = append(out, request(og))
		}
	}
	return out
}

// groupsInNamespace maps an object to the groups of its namespace.
func (r *Reconciler) groupsInNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	var list operatorsv1.OperatorGroupList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list operatorgroups")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, request(&list.Items[i]))
	}
	return out
}

// groupsOfServiceAccount maps a service account to the groups of its namespace that name it.
func (r *Reconciler) groupsOfServiceAccount(ctx context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, req := range r.groupsInNamespace(ctx, obj) {
		og := &operatorsv1.OperatorGroup{}
		if err := r.Client.Get(ctx, req.NamespacedName, og); err == nil && og.Spec.ServiceAccountName == obj.GetName() {
			out = append(out, req)
		}
	}
	return out
}

// groupOfClusterRole maps a ClusterRole to the group its owner labels name.
func groupOfClusterRole(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[groups.OwnerKindLabel] != operatorsv1.OperatorGroupKind || l[groups.OwnerLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[groups.OwnerNamespaceLabel], Name: l[groups.OwnerLabel]}}}
}

func request(og *operatorsv1.OperatorGroup) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: og.Namespace, Name: og.Name}}
}
