package install

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/resolve"
)

// PermissionsHashLabel is OLM's olm.permissions.hash: a hash of the content of the RBAC
// generated for a CSV (resolve.PolicyRulesHash, resolve.BindingHash).
const PermissionsHashLabel = resolve.PermissionsHashLabel

// Permissions are the service accounts and RBAC a CSV's permissions and clusterPermissions ask
// for, as OLM's InstallPlans create them (OLM resolver/rbac.go; olm-behaviour 2.2).
type Permissions struct {
	ServiceAccounts     []corev1.ServiceAccount
	Roles               []rbacv1.Role
	RoleBindings        []rbacv1.RoleBinding
	ClusterRoles        []rbacv1.ClusterRole
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
}

// PermissionsFor returns the objects a CSV's permissions need: exactly those an InstallPlan
// for the CSV creates (resolve.PermissionObjects, the objects of the steps resolve.BundleSteps
// makes), so that whether the InstallPlan or the CSV controller writes them first, they are
// the same objects:
//
//   - a ServiceAccount per service account named (never "default"), owned by the CSV;
//   - per permissions entry, a Role with its rules and a RoleBinding of it to the service
//     account, both named <csv>-<sa>-<hash> and owned by the CSV;
//   - per clusterPermissions entry, a ClusterRole and a ClusterRoleBinding named <csv>-<hash>.
//
// The RBAC carries the CSV's owner labels and olm.permissions.hash. The owner references carry the
// CSV's UID (steps made from a catalog have none; the InstallPlan fills it in). The CSV
// controller calls it on every sync: it builds the objects without encoding them into steps
// and decoding them again, which cost most of its time (BenchmarkPermissionsFor).
func PermissionsFor(csv *v1alpha1.ClusterServiceVersion) (Permissions, error) {
	var out Permissions
	for _, o := range resolve.PermissionObjects(csv) {
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			add(&out.ServiceAccounts, o.DeepCopy(), csv)
		case *rbacv1.Role:
			add(&out.Roles, o.DeepCopy(), csv)
		case *rbacv1.RoleBinding:
			add(&out.RoleBindings, o.DeepCopy(), csv)
		case *rbacv1.ClusterRole:
			add(&out.ClusterRoles, o.DeepCopy(), csv)
		case *rbacv1.ClusterRoleBinding:
			add(&out.ClusterRoleBindings, o.DeepCopy(), csv)
		default:
			return Permissions{}, fmt.Errorf("rbac of csv %s/%s: unexpected %T", csv.Namespace, csv.Name, o)
		}
	}
	return out, nil
}

// object is a pointer to one of the typed objects PermissionsFor returns.
type object[T any] interface {
	*T
	GetOwnerReferences() []metav1.OwnerReference
	SetOwnerReferences([]metav1.OwnerReference)
	GetLabels() map[string]string
	SetLabels(map[string]string)
}

// add points obj's CSV owner references at csv's UID, adds olm.managed=true (which an
// InstallPlan puts on everything it creates), and appends it to list.
func add[T any, P object[T]](list *[]T, obj P, csv *v1alpha1.ClusterServiceVersion) {
	refs := obj.GetOwnerReferences()
	for i := range refs {
		if refs[i].Kind == v1alpha1.ClusterServiceVersionKind && refs[i].Name == csv.Name {
			refs[i] = OwnerReference(csv)
		}
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[groups.ManagedLabel] = groups.ManagedLabelValue
	obj.SetLabels(labels)
	*list = append(*list, *obj)
}

// ServiceAccountNames returns the service accounts a CSV's permissions and clusterPermissions
// name, sorted, "default" included.
func ServiceAccountNames(csv *v1alpha1.ClusterServiceVersion) []string {
	set := map[string]bool{}
	spec := csv.Spec.InstallStrategy.StrategySpec
	for _, p := range slices.Concat(spec.Permissions, spec.ClusterPermissions) {
		set[p.ServiceAccountName] = true
	}
	return slices.Sorted(maps.Keys(set))
}
