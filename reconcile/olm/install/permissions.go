package install

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math/big"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// PermissionsHashLabel carries the hash of a generated role's rules, or of a binding's role
// reference and subjects, so that the requirement check can tell the RBAC a CSV asks for
// exists without evaluating every binding of the cluster (OLM's olm.permissions.hash).
const PermissionsHashLabel = "olm.permissions.hash"

// defaultServiceAccount is never created: every namespace has it.
const defaultServiceAccount = "default"

// rbacNameMax is OLM's limit for generated RBAC names: a label value's length, so they can be
// selected on.
const rbacNameMax = 63

var (
	serviceAccountType     = metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}
	roleType               = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"}
	roleBindingType        = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"}
	clusterRoleType        = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"}
	clusterRoleBindingType = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"}
)

// Permissions are the service accounts and RBAC a CSV's permissions and clusterPermissions ask
// for, as OLM's InstallPlans create them (OLM resolver/rbac.go; olm-behaviour 2.2).
type Permissions struct {
	ServiceAccounts     []corev1.ServiceAccount
	Roles               []rbacv1.Role
	RoleBindings        []rbacv1.RoleBinding
	ClusterRoles        []rbacv1.ClusterRole
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
}

// PermissionsFor returns the objects a CSV's permissions need, in the CSV's namespace:
//
//   - a ServiceAccount per service account named (never "default"), owned by the CSV;
//   - per permissions entry, a Role with its rules and a RoleBinding of it to the service
//     account, both named <csv>-<sa>-<hash>;
//   - per clusterPermissions entry, a ClusterRole and a ClusterRoleBinding named <csv>-<hash>.
//
// Names are at most 63 characters (the base is cut before the hash). Namespaced objects are
// owned by the CSV; all carry the CSV's owner labels and the olm.permissions.hash label.
func PermissionsFor(csv *v1alpha1.ClusterServiceVersion) (Permissions, error) {
	var out Permissions
	seen := map[string]bool{}
	addServiceAccount := func(name string) {
		if name == defaultServiceAccount || seen[name] {
			return
		}
		seen[name] = true
		out.ServiceAccounts = append(out.ServiceAccounts, corev1.ServiceAccount{
			TypeMeta: serviceAccountType,
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: csv.Namespace,
				OwnerReferences: []metav1.OwnerReference{OwnerReference(csv)},
			},
		})
	}
	spec := csv.Spec.InstallStrategy.StrategySpec
	for _, p := range spec.Permissions {
		addServiceAccount(p.ServiceAccountName)
		role, binding, err := namespacedRBAC(csv, p)
		if err != nil {
			return Permissions{}, err
		}
		out.Roles = append(out.Roles, role)
		out.RoleBindings = append(out.RoleBindings, binding)
	}
	for _, p := range spec.ClusterPermissions {
		addServiceAccount(p.ServiceAccountName)
		role, binding, err := clusterRBAC(csv, p)
		if err != nil {
			return Permissions{}, err
		}
		out.ClusterRoles = append(out.ClusterRoles, role)
		out.ClusterRoleBindings = append(out.ClusterRoleBindings, binding)
	}
	return out, nil
}

// namespacedRBAC is the Role and RoleBinding of one permissions entry.
func namespacedRBAC(csv *v1alpha1.ClusterServiceVersion, p v1alpha1.StrategyDeploymentPermissions) (rbacv1.Role, rbacv1.RoleBinding, error) {
	name, err := generateName(csv.Name+"-"+p.ServiceAccountName, struct {
		Name       string                                 `json:"name"`
		Permission v1alpha1.StrategyDeploymentPermissions `json:"permission"`
	}{csv.Name, p})
	if err != nil {
		return rbacv1.Role{}, rbacv1.RoleBinding{}, err
	}
	roleHash, err := RulesHash(p.Rules)
	if err != nil {
		return rbacv1.Role{}, rbacv1.RoleBinding{}, err
	}
	roleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}
	subjects := serviceAccountSubjects(csv, p.ServiceAccountName)
	bindingHash, err := BindingHash(roleRef, subjects)
	if err != nil {
		return rbacv1.Role{}, rbacv1.RoleBinding{}, err
	}
	meta := func(hash string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: name, Namespace: csv.Namespace,
			Labels:          hashedOwnerLabels(csv, hash),
			OwnerReferences: []metav1.OwnerReference{OwnerReference(csv)},
		}
	}
	role := rbacv1.Role{TypeMeta: roleType, ObjectMeta: meta(roleHash), Rules: cloneRules(p.Rules)}
	binding := rbacv1.RoleBinding{TypeMeta: roleBindingType, ObjectMeta: meta(bindingHash), RoleRef: roleRef, Subjects: subjects}
	return role, binding, nil
}

// clusterRBAC is the ClusterRole and ClusterRoleBinding of one clusterPermissions entry.
func clusterRBAC(csv *v1alpha1.ClusterServiceVersion, p v1alpha1.StrategyDeploymentPermissions) (rbacv1.ClusterRole, rbacv1.ClusterRoleBinding, error) {
	name, err := generateName(csv.Name, struct {
		Name       string                                 `json:"name"`
		Namespace  string                                 `json:"namespace"`
		Permission v1alpha1.StrategyDeploymentPermissions `json:"permission"`
	}{csv.Name, csv.Namespace, p})
	if err != nil {
		return rbacv1.ClusterRole{}, rbacv1.ClusterRoleBinding{}, err
	}
	roleHash, err := RulesHash(p.Rules)
	if err != nil {
		return rbacv1.ClusterRole{}, rbacv1.ClusterRoleBinding{}, err
	}
	roleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	subjects := serviceAccountSubjects(csv, p.ServiceAccountName)
	bindingHash, err := BindingHash(roleRef, subjects)
	if err != nil {
		return rbacv1.ClusterRole{}, rbacv1.ClusterRoleBinding{}, err
	}
	role := rbacv1.ClusterRole{
		TypeMeta:   clusterRoleType,
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: hashedOwnerLabels(csv, roleHash)},
		Rules:      cloneRules(p.Rules),
	}
	binding := rbacv1.ClusterRoleBinding{
		TypeMeta:   clusterRoleBindingType,
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: hashedOwnerLabels(csv, bindingHash)},
		RoleRef:    roleRef, Subjects: subjects,
	}
	return role, binding, nil
}

func serviceAccountSubjects(csv *v1alpha1.ClusterServiceVersion, sa string) []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: csv.Namespace}}
}

func hashedOwnerLabels(csv *v1alpha1.ClusterServiceVersion, hash string) map[string]string {
	labels := OwnerLabels(csv)
	labels[PermissionsHashLabel] = hash
	return labels
}

// RulesHash is the olm.permissions.hash of a role: base62 of the SHA-224 of its rules' JSON.
func RulesHash(rules []rbacv1.PolicyRule) (string, error) {
	return contentHash(rules)
}

// BindingHash is the olm.permissions.hash of a binding: base62 of the SHA-224 of the JSON of
// its role reference and subjects.
func BindingHash(roleRef rbacv1.RoleRef, subjects []rbacv1.Subject) (string, error) {
	return contentHash(struct {
		RoleRef  rbacv1.RoleRef
		Subjects []rbacv1.Subject
	}{roleRef, subjects})
}

func contentHash(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("hash rbac content: %w", err)
	}
	sum := sha256.Sum224(raw)
	return new(big.Int).SetBytes(sum[:]).Text(62), nil
}

// generateName is base followed by a short hash of v, cut to rbacNameMax characters: names
// stay stable for the same content and differ when the rules do.
func generateName(base string, v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("name rbac for %s: %w", base, err)
	}
	h := fnv.New32a()
	_, _ = h.Write(raw)
	hash := utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
	if len(base)+len(hash)+1 > rbacNameMax {
		base = base[:rbacNameMax-len(hash)-1]
	}
	return base + "-" + hash, nil
}

func cloneRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(rules))
	for i := range rules {
		rules[i].DeepCopyInto(&out[i])
	}
	return out
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
