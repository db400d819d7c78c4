package csv

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// finalize is the CSV's cleanup before it goes (OLM's csv-cleanup finalizer): the ClusterRoles
// and ClusterRoleBindings that carry its owner labels — which no owner reference can tie to a
// namespaced CSV — and its copies are deleted; its namespaced objects go with it through their
// owner references. CRDs and custom resources are never deleted.
func (r *Reconciler) finalize(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) error {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return nil
	}
	owner := client.MatchingLabels(install.OwnerSelector(obj))
	if err := r.Client.DeleteAllOf(ctx, &rbacv1.ClusterRoleBinding{}, owner); err != nil {
		return fmt.Errorf("delete clusterrolebindings of csv %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	if err := r.Client.DeleteAllOf(ctx, &rbacv1.ClusterRole{}, owner); err != nil {
		return fmt.Errorf("delete clusterroles of csv %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	if err := r.deleteCopies(ctx, obj.Namespace, obj.Name); err != nil {
		return err
	}
	metrics.ForgetCSV(obj.Namespace, obj.Name)
	controllerutil.RemoveFinalizer(obj, Finalizer)
	return nil
}
