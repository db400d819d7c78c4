package csv

import (
	"context"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// finalize is the CSV's cleanup before it goes (OLM's csv-cleanup finalizer): the ClusterRoles,
// ClusterRoleBindings and webhook configurations that carry its owner labels — which no owner
// reference can tie to a namespaced CSV — and its copies are deleted; so are, as OLM's
// deletion handler does, the APIServices it owns and, unless another CSV replaces it, the
// conversion webhooks it wrote into CRDs; and the RoleBinding of its serving certificates in
// kube-system. Its namespaced objects go with it through their owner references. CRDs and
// custom resources are never deleted.
func (r *Reconciler) finalize(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) error {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return nil
	}
	owner := client.MatchingLabels(install.OwnerSelector(obj))
	for _, kind := range []struct {
		name string
		obj  client.Object
		opts []client.DeleteAllOfOption
	}{
		{"clusterrolebindings", &rbacv1.ClusterRoleBinding{}, []client.DeleteAllOfOption{owner}},
		{"clusterroles", &rbacv1.ClusterRole{}, []client.DeleteAllOfOption{owner}},
		{"mutatingwebhookconfigurations", &admissionregistrationv1.MutatingWebhookConfiguration{}, []client.DeleteAllOfOption{owner}},
		{"validatingwebhookconfigurations", &admissionregistrationv1.ValidatingWebhookConfiguration{}, []client.DeleteAllOfOption{owner}},
		{"rolebindings in " + install.KubeSystemNamespace, &rbacv1.RoleBinding{}, []client.DeleteAllOfOption{owner, client.InNamespace(install.KubeSystemNamespace)}},
	} {
		if err := r.Client.DeleteAllOf(ctx, kind.obj, kind.opts...); err != nil {
			return fmt.Errorf("delete %s of csv %s/%s: %w", kind.name, obj.Namespace, obj.Name, err)
		}
	}
	if err := r.deleteOwnedAPIServices(ctx, obj); err != nil {
		return err
	}
	if err := r.stripConversion(ctx, obj); err != nil {
		return err
	}
	if err := r.deleteCopies(ctx, obj.Namespace, obj.Name); err != nil {
		return err
	}
	metrics.ForgetCSV(obj.Namespace, obj.Name)
	controllerutil.RemoveFinalizer(obj, Finalizer)
	return nil
}

// deleteOwnedAPIServices deletes the APIServices of the CSV's owned API services whose owner
// labels name it.
func (r *Reconciler) deleteOwnedAPIServices(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) error {
	for _, d := range obj.Spec.APIServiceDefinitions.Owned {
		u, err := r.getAPIService(ctx, d.APIServiceName())
		if err != nil {
			return err
		}
		if u == nil || !install.LabelsNameOwner(u.GetLabels(), obj) {
			continue
		}
		if err := r.Client.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete apiservice %s of csv %s/%s: %w", u.GetName(), obj.Namespace, obj.Name, err)
		}
	}
	return nil
}

// stripConversion takes the CSV's conversion webhooks out of its CRDs when no CSV of the
// namespace replaces it (one that does takes them over).
func (r *Reconciler) stripConversion(ctx context.Context, obj *v1alpha1.ClusterServiceVersion) error {
	if !slices.ContainsFunc(obj.Spec.WebhookDefinitions, func(w v1alpha1.WebhookDescription) bool {
		return w.Type == v1alpha1.ConversionWebhook
	}) {
		return nil
	}
	var list v1alpha1.ClusterServiceVersionList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.Namespace), client.MatchingFields{indexReplaces: obj.Name}); err != nil {
		return fmt.Errorf("list csvs replacing %s: %w", obj.Name, err)
	}
	if len(list.Items) > 0 {
		return nil
	}
	return r.applier().StripConversion(ctx, obj)
}
