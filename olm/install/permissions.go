package install

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
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
// for the CSV creates (the steps resolve.BundleSteps makes), so that whether the InstallPlan
// or the CSV controller writes them first, they are the same objects:
//
//   - a ServiceAccount per service account named (never "default"), owned by the CSV;
//   - per permissions entry, a Role with its rules and a RoleBinding of it to the service
//     account, both named <csv>-<sa>-<hash> and owned by the CSV;
//   - per clusterPermissions entry, a ClusterRole and a ClusterRoleBinding named <csv>-<hash>.
//
// The RBAC carries the CSV's owner labels and olm.permissions.hash. The owner references carry the
// CSV's UID (steps made from a catalog have none; the InstallPlan fills it in).
func PermissionsFor(csv *v1alpha1.ClusterServiceVersion) (Permissions, error) {
	steps, err := resolve.BundleSteps(csv.Namespace, resolve.Bundle{
		Name: csv.Name, Replaces: csv.Spec.Replaces, Content: &catalog.Bundle{Name: csv.Name, CSV: csv},
	})
	if err != nil {
		return Permissions{}, fmt.Errorf("rbac of csv %s/%s: %w", csv.Namespace, csv.Name, err)
	}
	var out Permissions
	for _, s := range steps {
		var err error
		switch s.Resource.Kind {
		case "ServiceAccount":
			err = decodeInto(s, &out.ServiceAccounts, csv)
		case "Role":
			err = decodeInto(s, &out.Roles, csv)
		case "RoleBinding":
			err = decodeInto(s, &out.RoleBindings, csv)
		case "ClusterRole":
			err = decodeInto(s, &out.ClusterRoles, csv)
		case "ClusterRoleBinding":
			err = decodeInto(s, &out.ClusterRoleBindings, csv)
		}
		if err != nil {
			return Permissions{}, fmt.Errorf("rbac of csv %s/%s: %w", csv.Namespace, csv.Name, err)
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

// decodeInto decodes a step's manifest, points its CSV owner references at csv's UID, adds
// olm.managed=true (which an InstallPlan puts on everything it creates), and appends it to list.
func decodeInto[T any, P object[T]](s v1alpha1.Step, list *[]T, csv *v1alpha1.ClusterServiceVersion) error {
	var obj T
	if err := json.Unmarshal([]byte(s.Resource.Manifest), &obj); err != nil {
		return fmt.Errorf("decode %s %s: %w", s.Resource.Kind, s.Resource.Name, err)
	}
	p := P(&obj)
	refs := slices.Clone(p.GetOwnerReferences())
	for i := range refs {
		if refs[i].Kind == v1alpha1.ClusterServiceVersionKind && refs[i].Name == csv.Name {
			refs[i] = OwnerReference(csv)
		}
	}
	p.SetOwnerReferences(refs)
	labels := maps.Clone(p.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[groups.ManagedLabel] = groups.ManagedLabelValue
	p.SetLabels(labels)
	*list = append(*list, obj)
	return nil
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
