package groups

import (
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// The label keys the ClusterRoles aggregate on, the suffixes of the roles, and what the
// verbs of each are (seed 000, "Role-based access control").
const (
	aggregateToOLMPrefix        = "olm.opgroup.permissions/aggregate-to-"
	aggregateToKubernetesPrefix = "rbac.authorization.k8s.io/aggregate-to-"
	suffixAdmin                 = "admin"
	suffixEdit                  = "edit"
	suffixView                  = "view"
	suffixCRDView               = "view-crdview"
	apiextensionsGroup          = "apiextensions.k8s.io"
	crdResource                 = "customresourcedefinitions"
	// maxNameLength is the longest name the API server takes for most objects.
	maxNameLength = validation.DNS1123SubdomainMaxLength
	// namespaceAllSeedSpelling is how seed 000 writes "all namespaces" in its RBAC rule; OLM's
	// status writes "".
	namespaceAllSeedSpelling = "*"
)

var (
	verbsAdmin = []string{"*"}
	verbsEdit  = []string{"create", "update", "patch", "delete"}
	verbsView  = []string{"get", "list", "watch"}
	// suffixVerbs lists the per-API roles in the order they are returned.
	suffixVerbs = []struct {
		suffix string
		verbs  []string
	}{{suffixAdmin, verbsAdmin}, {suffixEdit, verbsEdit}, {suffixView, verbsView}}

	clusterRoleType        = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"}
	clusterRoleBindingType = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"}
	roleType               = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"}
	roleBindingType        = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"}
)

// GroupClusterRoles returns the three ClusterRoles OLM keeps for a group (seed 000):
// <group>-admin, <group>-edit and <group>-view, each with one aggregation rule selecting the
// label olm.opgroup.permissions/aggregate-to-<admin|edit|view>: <group>, which the per-API
// roles of the group's members carry. They are owned by the group (olm.owner labels).
//
// These are the seed's names, not OLM's hashed ones (docs/olm.md). Being cluster-scoped and
// named after the group alone, they are shared by groups of the same name in different
// namespaces; the controller must not let one group's roles replace another's.
func GroupClusterRoles(og *operatorsv1.OperatorGroup) []rbacv1.ClusterRole {
	out := make([]rbacv1.ClusterRole, 0, len(suffixVerbs))
	for _, s := range suffixVerbs {
		out = append(out, rbacv1.ClusterRole{
			TypeMeta: clusterRoleType,
			ObjectMeta: metav1.ObjectMeta{
				Name:   fitName(og.Name, "-"+s.suffix),
				Labels: ownerLabels(og.Name, og.Namespace, operatorsv1.OperatorGroupKind),
			},
			AggregationRule: &rbacv1.AggregationRule{
				ClusterRoleSelectors: []metav1.LabelSelector{{
					MatchLabels: map[string]string{aggregateToOLMPrefix + s.suffix: LabelValue(og.Name)},
				}},
			},
		})
	}
	return out
}

// ProvidedAPIClusterRoles returns the ClusterRoles OLM generates for the APIs a member CSV of
// og provides (seed 000), when the CSV watches all namespaces (og is global and the CSV
// supports AllNamespaces) and has not failed with InterOperatorGroupOwnerConflict; none
// otherwise. For each owned CRD: <Kind>.<group>-<version>-admin (verbs *), -edit (create,
// update, patch, delete) and -view (get, list, watch) on the CRD's resource, and
// -view-crdview (get on the CRD itself); for each owned APIService the first three. Each
// carries rbac.authorization.k8s.io/aggregate-to-<admin|edit|view>: "true" (so Kubernetes'
// admin, edit and view roles pick it up) and olm.opgroup.permissions/aggregate-to-<...>: <og>
// (so the group's roles do), and the CSV's owner labels: OLM makes the CRD or APIService their
// owner through an ownerReference, which plain data cannot hold (it needs the owner's UID), so
// the CSV's cleanup removes them instead, and the CSV replacing it takes them over by name.
func ProvidedAPIClusterRoles(csv *v1alpha1.ClusterServiceVersion, og *operatorsv1.OperatorGroup) ([]rbacv1.ClusterRole, error) {
	if !watchesAllNamespaces(csv, og) || !generatesRBAC(csv, og) {
		return nil, nil
	}
	crds, err := ownedCRDs(csv)
	if err != nil {
		return nil, err
	}
	var out []rbacv1.ClusterRole
	for _, crd := range crds {
		base := fmt.Sprintf("%s.%s-%s", crd.Kind, crd.Group, crd.Version)
		out = append(out, perAPIRoles(csv, og, base, crd.Group, crd.Plural)...)
		out = append(out, perAPIRole(csv, og, fitName(base, "-"+suffixCRDView), suffixView, rbacv1.PolicyRule{
			Verbs: []string{"get"}, APIGroups: []string{apiextensionsGroup},
			Resources: []string{crdResource}, ResourceNames: []string{crd.Name},
		}))
	}
	for _, svc := range csv.Spec.APIServiceDefinitions.Owned {
		base := fmt.Sprintf("%s.%s-%s", svc.Kind, svc.Group, svc.Version)
		out = append(out, perAPIRoles(csv, og, base, svc.Group, svc.Name)...)
	}
	return out, nil
}

// perAPIRoles returns the admin, edit and view roles on one resource.
func perAPIRoles(csv *v1alpha1.ClusterServiceVersion, og *operatorsv1.OperatorGroup, base, group, resource string) []rbacv1.ClusterRole {
	out := make([]rbacv1.ClusterRole, 0, len(suffixVerbs))
	for _, s := range suffixVerbs {
		out = append(out, perAPIRole(csv, og, fitName(base, "-"+s.suffix), s.suffix, rbacv1.PolicyRule{
			Verbs: s.verbs, APIGroups: []string{group}, Resources: []string{resource},
		}))
	}
	return out
}

// perAPIRole is one per-API role aggregating into the group's and Kubernetes' aggregate roles.
func perAPIRole(csv *v1alpha1.ClusterServiceVersion, og *operatorsv1.OperatorGroup, name, aggregateTo string, rule rbacv1.PolicyRule) rbacv1.ClusterRole {
	labels := ownerLabels(csv.Name, csv.Namespace, v1alpha1.ClusterServiceVersionKind)
	labels[aggregateToKubernetesPrefix+aggregateTo] = "true"
	labels[aggregateToOLMPrefix+aggregateTo] = LabelValue(og.Name)
	return rbacv1.ClusterRole{
		TypeMeta:   clusterRoleType,
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Rules:      []rbacv1.PolicyRule{rule},
	}
}

// RBAC is a set of RBAC objects to create.
type RBAC struct {
	ClusterRoles        []rbacv1.ClusterRole
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
	Roles               []rbacv1.Role
	RoleBindings        []rbacv1.RoleBinding
}

// AdditionalRBAC returns seed 000's "additional Roles and RoleBindings" for a member CSV of og,
// under the same condition as its other generated RBAC (not failed with
// InterOperatorGroupOwnerConflict):
//
//   - when og targets exactly all namespaces ("", which the seed writes "*"): for each entry of
//     the CSV's permissions, a ClusterRole with its rules and a ClusterRoleBinding to its service
//     account in the CSV's namespace. As OLM does when it lifts an operator's Roles to the
//     cluster, each ClusterRole may also get, list and watch namespaces.
//   - otherwise: the Roles and RoleBindings of the CSV's namespace that carry the CSV's owner
//     labels (roles, bindings: what the cluster has), copied into every other target
//     namespace, owned there by the CSV's copy and labelled olm.copiedFrom=<CSV namespace>.
//     An OwnNamespace group gets nothing.
//
// Everything generated carries the owner labels olm.owner, olm.owner.namespace,
// olm.owner.kind and olm.managed, as OLM puts them.
func AdditionalRBAC(csv *v1alpha1.ClusterServiceVersion, og *operatorsv1.OperatorGroup, roles []rbacv1.Role, bindings []rbacv1.RoleBinding) RBAC {
	if !generatesRBAC(csv, og) {
		return RBAC{}
	}
	targets := og.Status.Namespaces
	if IsAllNamespaces(targets) || (len(targets) == 1 && targets[0] == namespaceAllSeedSpelling) {
		return clusterRBACForPermissions(csv)
	}
	var out RBAC
	for _, ns := range sortedUnique(targets) {
		if ns == csv.Namespace {
			continue
		}
		for i := range roles {
			if ownedByCSV(&roles[i].ObjectMeta, csv) {
				out.Roles = append(out.Roles, copyRole(&roles[i], csv, ns))
			}
		}
		for i := range bindings {
			if ownedByCSV(&bindings[i].ObjectMeta, csv) {
				out.RoleBindings = append(out.RoleBindings, copyRoleBinding(&bindings[i], csv, ns))
			}
		}
	}
	return out
}

// clusterRBACForPermissions is a ClusterRole and a ClusterRoleBinding per permissions entry of
// the CSV's install strategy, named <csv>-<service account> (with -<index> for a service
// account listed again).
func clusterRBACForPermissions(csv *v1alpha1.ClusterServiceVersion) RBAC {
	var out RBAC
	seen := map[string]bool{}
	for i, p := range csv.Spec.InstallStrategy.StrategySpec.Permissions {
		name := csv.Name + "-" + p.ServiceAccountName
		if seen[name] {
			name += "-" + strconv.Itoa(i)
		}
		seen[name] = true
		name = fitName(name, "")
		labels := ownerLabels(csv.Name, csv.Namespace, v1alpha1.ClusterServiceVersionKind)
		rules := append(clonePolicyRules(p.Rules), rbacv1.PolicyRule{
			Verbs: verbsView, APIGroups: []string{corev1.GroupName}, Resources: []string{"namespaces"},
		})
		out.ClusterRoles = append(out.ClusterRoles, rbacv1.ClusterRole{
			TypeMeta:   clusterRoleType,
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Rules:      rules,
		})
		out.ClusterRoleBindings = append(out.ClusterRoleBindings, rbacv1.ClusterRoleBinding{
			TypeMeta:   clusterRoleBindingType,
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: maps.Clone(labels)},
			Subjects: []rbacv1.Subject{{
				Kind: rbacv1.ServiceAccountKind, Name: p.ServiceAccountName, Namespace: csv.Namespace,
			}},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		})
	}
	return out
}

// copyRole is a CSV-owned Role of the operator namespace as copied into a target namespace.
func copyRole(r *rbacv1.Role, csv *v1alpha1.ClusterServiceVersion, namespace string) rbacv1.Role {
	return rbacv1.Role{
		TypeMeta:   roleType,
		ObjectMeta: copiedMeta(&r.ObjectMeta, csv, namespace),
		Rules:      clonePolicyRules(r.Rules),
	}
}

// copyRoleBinding is a CSV-owned RoleBinding as copied into a target namespace. Its subjects
// still name the operator's service accounts in the operator namespace.
func copyRoleBinding(b *rbacv1.RoleBinding, csv *v1alpha1.ClusterServiceVersion, namespace string) rbacv1.RoleBinding {
	c := b.DeepCopy()
	return rbacv1.RoleBinding{
		TypeMeta:   roleBindingType,
		ObjectMeta: copiedMeta(&b.ObjectMeta, csv, namespace),
		Subjects:   c.Subjects,
		RoleRef:    c.RoleRef,
	}
}

// copiedMeta is the metadata of an object copied from the operator namespace into namespace:
// same name, labels and annotations, owned by the CSV's copy there (a CSV of the same name).
func copiedMeta(m *metav1.ObjectMeta, csv *v1alpha1.ClusterServiceVersion, namespace string) metav1.ObjectMeta {
	labels := maps.Clone(m.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, ownerLabels(csv.Name, namespace, v1alpha1.ClusterServiceVersionKind))
	labels[v1alpha1.CopiedLabelKey] = csv.Namespace
	return metav1.ObjectMeta{
		Name:        m.Name,
		Namespace:   namespace,
		Labels:      labels,
		Annotations: maps.Clone(m.Annotations),
	}
}

// ownedByCSV reports whether an object of the CSV's namespace carries the CSV's owner labels.
func ownedByCSV(m *metav1.ObjectMeta, csv *v1alpha1.ClusterServiceVersion) bool {
	kind, hasKind := m.Labels[OwnerKindLabel]
	return m.Namespace == csv.Namespace &&
		m.Labels[OwnerLabel] == LabelValue(csv.Name) &&
		m.Labels[OwnerNamespaceLabel] == csv.Namespace &&
		(!hasKind || kind == v1alpha1.ClusterServiceVersionKind)
}

// watchesAllNamespaces reports whether a CSV in og watches all namespaces: og is global and the
// CSV's install modes support AllNamespaces.
func watchesAllNamespaces(csv *v1alpha1.ClusterServiceVersion, og *operatorsv1.OperatorGroup) bool {
	if !IsAllNamespaces(og.Status.Namespaces) {
		return false
	}
	set, err := NewInstallModeSet(csv.Spec.InstallModes)
	return err == nil && set[v1alpha1.InstallModeTypeAllNamespaces]
}

// generatesRBAC reports whether a CSV gets RBAC from its group: it is an active member of og
// and has not failed with InterOperatorGroupOwnerConflict (seed 000).
func generatesRBAC(csv *v1alpha1.ClusterServiceVersion, og *operatorsv1.OperatorGroup) bool {
	conflict := csv.Status.Phase == v1alpha1.CSVPhaseFailed &&
		csv.Status.Reason == v1alpha1.CSVReasonInterOperatorGroupOwnerConflict
	return csv.Namespace == og.Namespace && isActiveMember(csv) && !conflict
}

// ownerLabels are the labels OLM puts on what it generates for an owner.
func ownerLabels(name, namespace, kind string) map[string]string {
	return map[string]string{
		OwnerLabel:          LabelValue(name),
		OwnerNamespaceLabel: namespace,
		OwnerKindLabel:      kind,
		ManagedLabel:        ManagedLabelValue,
	}
}

func clonePolicyRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(rules))
	for i := range rules {
		rules[i].DeepCopyInto(&out[i])
	}
	return out
}

// LabelValue returns name as a label value: name itself when it is a valid one, else (a name
// longer than 63 characters) its first characters and a hash of the whole, so that distinct
// names stay distinct. Every writer and reader of owner and aggregation labels goes through it.
func LabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	h := shortHash(name)
	keep := min(len(name), validation.LabelValueMaxLength-len(h)-1)
	return name[:keep] + "-" + h
}

// fitName joins base and suffix into an object name of at most 253 characters; a longer base
// is cut and followed by a hash of the whole name, so the suffix stays readable and distinct
// names stay distinct.
func fitName(base, suffix string) string {
	name := base + suffix
	if len(name) <= maxNameLength {
		return name
	}
	h := shortHash(name)
	return base[:maxNameLength-len(suffix)-len(h)-1] + "-" + h + suffix
}

// shortHash is the hex FNV-64a hash of s.
func shortHash(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}
