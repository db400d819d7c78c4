package resolve

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/big"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// PermissionsHashLabel labels the RBAC an InstallPlan creates for a CSV with a hash of its
// content, as OLM's resolver writes it: a Role or ClusterRole with PolicyRulesHash of its
// rules, a binding with BindingHash of its roleRef and subjects. (The hash that ends the
// objects' names is another one, of the CSV and the permission entry: RoleName.)
const PermissionsHashLabel = "olm.permissions.hash"

// maxNameLength is how long OLM lets a generated RBAC name be.
const maxNameLength = 63

type rbacObject struct {
	name   string
	object any
}

// rbacObjects are the ServiceAccounts, Roles, RoleBindings, ClusterRoles and
// ClusterRoleBindings OLM's InstallPlan creates for a CSV's install strategy
// (resolver/rbac.go), grouped by service account in the order the strategy first names
// each, as OLM groups them: Role and RoleBinding <csv>-<sa>-<hash> per permissions entry,
// ClusterRole and ClusterRoleBinding <csv>-<hash> per clusterPermissions entry, the hash
// computed as OLM computes it (FNV-32a of the spew dump of the CSV name and the entry), all
// labelled with the CSV as owner. The ServiceAccount "default" is not created.
func rbacObjects(csv *v1alpha1.ClusterServiceVersion) []rbacObject {
	var order []string // service accounts, in the order the strategy first names them
	get := func(sa string) {
		if !slices.Contains(order, sa) {
			order = append(order, sa)
		}
	}
	owner := metav1.OwnerReference{
		APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ClusterServiceVersionKind,
		Name: csv.Name, UID: csv.UID, BlockOwnerDeletion: new(false), Controller: new(false),
	}
	strategy := csv.Spec.InstallStrategy.StrategySpec
	var roles, bindings, clusterRoles, clusterBindings = map[string][]rbacObject{}, map[string][]rbacObject{}, map[string][]rbacObject{}, map[string][]rbacObject{}
	for _, perm := range strategy.Permissions {
		get(perm.ServiceAccountName)
		name := RoleName(csv.Name, perm)
		role := &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: csv.Namespace, OwnerReferences: []metav1.OwnerReference{owner}, Labels: ownerLabels(csv, PolicyRulesHash(perm.Rules))},
			Rules:      perm.Rules,
		}
		binding := &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: csv.Namespace, OwnerReferences: []metav1.OwnerReference{owner}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: perm.ServiceAccountName, Namespace: csv.Namespace}},
		}
		binding.Labels = ownerLabels(csv, BindingHash(binding.RoleRef, binding.Subjects))
		roles[perm.ServiceAccountName] = append(roles[perm.ServiceAccountName], rbacObject{name, role})
		bindings[perm.ServiceAccountName] = append(bindings[perm.ServiceAccountName], rbacObject{name, binding})
	}
	for _, perm := range strategy.ClusterPermissions {
		get(perm.ServiceAccountName)
		name := ClusterRoleName(csv.Name, csv.Namespace, perm)
		role := &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: ownerLabels(csv, PolicyRulesHash(perm.Rules))},
			Rules:      perm.Rules,
		}
		binding := &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: perm.ServiceAccountName, Namespace: csv.Namespace}},
		}
		binding.Labels = ownerLabels(csv, BindingHash(binding.RoleRef, binding.Subjects))
		clusterRoles[perm.ServiceAccountName] = append(clusterRoles[perm.ServiceAccountName], rbacObject{name, role})
		clusterBindings[perm.ServiceAccountName] = append(clusterBindings[perm.ServiceAccountName], rbacObject{name, binding})
	}
	var out []rbacObject
	for _, name := range order {
		if name != "default" {
			sa := &corev1.ServiceAccount{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: csv.Namespace, OwnerReferences: []metav1.OwnerReference{owner}},
			}
			out = append(out, rbacObject{name, sa})
		}
		out = append(out, roles[name]...)
		out = append(out, bindings[name]...)
		out = append(out, clusterRoles[name]...)
		out = append(out, clusterBindings[name]...)
	}
	return out
}

// PermissionObjects returns the objects BundleSteps makes the steps of a CSV's permissions of
// — ServiceAccounts, Roles, RoleBindings, ClusterRoles and ClusterRoleBindings, as
// *corev1.ServiceAccount, *rbacv1.Role and so on — in the steps' order, without encoding the
// CSV and each object into a step: for the CSV controller, which writes the same objects on
// every sync of a CSV (install.PermissionsFor). Their rules are the CSV's own slices: copy an
// object before changing it.
func PermissionObjects(csv *v1alpha1.ClusterServiceVersion) []any {
	objs := rbacObjects(csv)
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o.object
	}
	return out
}

// RoleName is the name of the Role and RoleBinding OLM generates for one permissions entry of
// the CSV csvName: it ends with a hash of the CSV's name and the entry.
func RoleName(csvName string, perm v1alpha1.StrategyDeploymentPermissions) string {
	return hashedName(csvName+"-"+perm.ServiceAccountName, permissionHash(csvName, perm))
}

// ClusterRoleName is the name of the ClusterRole and ClusterRoleBinding OLM generates for one
// clusterPermissions entry of the CSV csvNamespace/csvName: it ends with a hash of the CSV's
// name and namespace and the entry.
func ClusterRoleName(csvName, csvNamespace string, perm v1alpha1.StrategyDeploymentPermissions) string {
	return hashedName(csvName, clusterPermissionHash(csvName, csvNamespace, perm))
}

// PolicyRulesHash is OLM's olm.permissions.hash of a Role's or ClusterRole's rules: the
// SHA-224 of their JSON, as a number in base 62 (resolver.PolicyRuleHashLabelValue).
func PolicyRulesHash(rules []rbacv1.PolicyRule) string {
	raw, err := json.Marshal(rules)
	if err != nil {
		return "" // PolicyRules always marshal
	}
	return base62SHA224(raw)
}

// BindingHash is OLM's olm.permissions.hash of a binding: the SHA-224 of the JSON of its
// roleRef and subjects, in base 62 (resolver.RoleReferenceAndSubjectHashLabelValue).
func BindingHash(ref rbacv1.RoleRef, subjects []rbacv1.Subject) string {
	raw, err := json.Marshal(&struct {
		RoleRef  rbacv1.RoleRef
		Subjects []rbacv1.Subject
	}{RoleRef: ref, Subjects: subjects})
	if err != nil {
		return ""
	}
	return base62SHA224(raw)
}

func base62SHA224(b []byte) string {
	sum := sha256.Sum224(b)
	return new(big.Int).SetBytes(sum[:]).Text(62)
}

// ownerLabels are the CSV's owner labels as the CSV controller writes them too
// (groups.LabelValue keeps an over-long CSV name a valid label value).
func ownerLabels(csv *v1alpha1.ClusterServiceVersion, hash string) map[string]string {
	return map[string]string{
		groups.OwnerLabel:          groups.LabelValue(csv.Name),
		groups.OwnerNamespaceLabel: csv.Namespace,
		groups.OwnerKindLabel:      v1alpha1.ClusterServiceVersionKind,
		PermissionsHashLabel:       hash,
	}
}

// permissionHash and clusterPermissionHash are OLM's generateName hashes: FNV-32a of the
// spew dump (k8s.io/utils/dump.ForHash) of the CSV name and the permission entry (and the
// CSV namespace for cluster permissions), its decimal digits mapped to safe characters.
func permissionHash(csvName string, perm v1alpha1.StrategyDeploymentPermissions) string {
	return deepHash([]any{csvName, perm})
}

func clusterPermissionHash(csvName, csvNamespace string, perm v1alpha1.StrategyDeploymentPermissions) string {
	return deepHash([]any{csvName, csvNamespace, perm})
}

func deepHash(obj any) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(dump.ForHash(obj)))
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// hashedName is base-hash, base cut so that the name fits in 63 characters.
func hashedName(base, hash string) string {
	if len(base)+len(hash) > maxNameLength {
		base = base[:maxNameLength-len(hash)-1]
	}
	return base + "-" + hash
}
