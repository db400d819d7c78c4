package groups

import (
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"maps"
	"math/big"
	"slices"
	"strings"

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
	suffixCRDView               = "crdview"
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

// groupClusterRoleNameFormat is OLM's name of a group's aggregated ClusterRole:
// olm.og.<group>.<suffix>-<hash>.
const groupClusterRoleNameFormat = "olm.og.%s.%s-%s"

// GroupClusterRoleName is the name OLM gives a group's admin, edit or view ClusterRole:
// olm.og.<group>.<suffix>-<base62 of the SHA-224 of "<namespace>/<group>/<suffix>">, the
// group's name cut short so the whole fits 253 characters. The hash makes it unique per
// group: two groups of the same name in two namespaces (og, global-operators) each get
// their own roles. Seed 000 names them <group>-admin, -edit and -view, which two such
// groups would share; OLM's code stopped doing so and olmsync follows the code
// (docs/olm.md).
func GroupClusterRoleName(og *operatorsv1.OperatorGroup, suffix string) string {
	hash := base62SHA224(fmt.Sprintf("%s/%s/%s", og.Namespace, og.Name, suffix))
	limit := maxNameLength - len(strings.ReplaceAll(groupClusterRoleNameFormat, "%s", "")) - len(suffix) - len(hash)
	name := og.Name
	if len(name) >= limit {
		name = name[:limit]
	}
	return fmt.Sprintf(groupClusterRoleNameFormat, name, suffix, hash)
}

// AggregationLabel is the label a per-API ClusterRole carries, with the value "true", for the
// group roles of the same suffix to aggregate it: olm.opgroup.permissions/aggregate-to-<hex
// FNV-64a of Kind.version.group>-<suffix>, as OLM writes it.
func AggregationLabel(api API, suffix string) string {
	return aggregateToOLMPrefix + apiHash(api) + "-" + suffix
}

// GroupClusterRoles returns the three ClusterRoles OLM keeps for a group, admin, edit and
// view (GroupClusterRoleName), owned by the group (olm.owner labels, olm.managed). Each
// aggregates, for every API in apis, the per-API role of its suffix: one selector per API
// (AggregationLabel: "true"), sorted by label so that the rule is written once and not again
// for a change of order; no aggregation rule when apis is empty. apis is what OLM gives it:
// the group's olm.providedAPIs and the APIs owned by the CSVs of the group's namespace that
// are not copies (GroupRoleAPIs).
func GroupClusterRoles(og *operatorsv1.OperatorGroup, apis APISet) []rbacv1.ClusterRole {
	out := make([]rbacv1.ClusterRole, 0, len(suffixVerbs))
	for _, s := range suffixVerbs {
		out = append(out, rbacv1.ClusterRole{
			TypeMeta: clusterRoleType,
			ObjectMeta: metav1.ObjectMeta{
				Name:   GroupClusterRoleName(og, s.suffix),
				Labels: ownerLabels(og.Name, og.Namespace, operatorsv1.OperatorGroupKind),
			},
			AggregationRule: aggregationRule(apis, s.suffix),
		})
	}
	return out
}

// aggregationRule selects the per-API roles of suffix for every API in apis.
func aggregationRule(apis APISet, suffix string) *rbacv1.AggregationRule {
	if len(apis) == 0 {
		return nil
	}
	keys := make([]string, 0, len(apis))
	for api := range apis {
		keys = append(keys, AggregationLabel(api, suffix))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	selectors := make([]metav1.LabelSelector, 0, len(keys))
	for _, k := range keys {
		selectors = append(selectors, metav1.LabelSelector{MatchLabels: map[string]string{k: "true"}})
	}
	return &rbacv1.AggregationRule{ClusterRoleSelectors: selectors}
}

// GroupRoleAPIs returns the APIs a group's roles aggregate, as OLM computes them: those its
// olm.providedAPIs annotation lists and those owned by every CSV of its namespace, in any
// phase, that is not a copy of another namespace's CSV. A CSV whose owned CRD names cannot
// be read adds nothing (OLM skips it too).
func GroupRoleAPIs(og *operatorsv1.OperatorGroup, csvs []v1alpha1.ClusterServiceVersion) APISet {
	apis := GroupProvidedAPIs(og)
	for i := range csvs {
		c := &csvs[i]
		if c.Namespace != og.Namespace || IsCopied(c) {
			continue
		}
		provided, err := ProvidedAPIs(c)
		if err != nil {
			continue
		}
		apis = apis.Union(provided)
	}
	return apis
}

// ProvidedAPIClusterRoles returns the ClusterRoles OLM generates for the APIs a member CSV of
// og provides, when the CSV watches all namespaces (og is global and the CSV supports
// AllNamespaces) and has not failed with InterOperatorGroupOwnerConflict; none otherwise.
// Named as OLM names them: for each owned CRD, <crd name>-<version>-admin (verbs *), -edit
// (create, update, patch, delete) and -view (get, list, watch) on the CRD's resource, and
// <crd name>-<version>-crdview (get on the CRD itself, aggregated into view); for each
// owned APIService, <plural>-<version>-admin, -edit and -view. Each carries
// rbac.authorization.k8s.io/aggregate-to-<admin|edit|view>: "true" (so Kubernetes' admin,
// edit and view roles pick it up), AggregationLabel: "true" (so the group roles do) and
// olm.managed. OLM makes the CRD or APIService their owner through an ownerReference, which
// plain data cannot hold (it needs the owner's UID); olmsync puts the CSV's owner labels on
// them instead, so the CSV's cleanup removes them, and the CSV replacing it takes them over
// by name (docs/olm.md).
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
		api := API{Group: crd.Group, Version: crd.Version, Kind: crd.Kind}
		base := fmt.Sprintf("%s-%s", crd.Name, crd.Version)
		out = append(out, perAPIRoles(csv, api, base, crd.Group, crd.Plural)...)
		out = append(out, perAPIRole(csv, api, fitName(base, "-"+suffixCRDView), suffixView, rbacv1.PolicyRule{
			Verbs: []string{"get"}, APIGroups: []string{apiextensionsGroup},
			Resources: []string{crdResource}, ResourceNames: []string{crd.Name},
		}))
	}
	for _, svc := range csv.Spec.APIServiceDefinitions.Owned {
		api := API{Group: svc.Group, Version: svc.Version, Kind: svc.Kind}
		base := fmt.Sprintf("%s-%s", svc.Name, svc.Version)
		out = append(out, perAPIRoles(csv, api, base, svc.Group, svc.Name)...)
	}
	return out, nil
}

// perAPIRoles returns the admin, edit and view roles on one resource.
func perAPIRoles(csv *v1alpha1.ClusterServiceVersion, api API, base, group, resource string) []rbacv1.ClusterRole {
	out := make([]rbacv1.ClusterRole, 0, len(suffixVerbs))
	for _, s := range suffixVerbs {
		out = append(out, perAPIRole(csv, api, fitName(base, "-"+s.suffix), s.suffix, rbacv1.PolicyRule{
			Verbs: s.verbs, APIGroups: []string{group}, Resources: []string{resource},
		}))
	}
	return out
}

// perAPIRole is one per-API role aggregating into the group's and Kubernetes' aggregate roles.
func perAPIRole(csv *v1alpha1.ClusterServiceVersion, api API, name, aggregateTo string, rule rbacv1.PolicyRule) rbacv1.ClusterRole {
	labels := ownerLabels(csv.Name, csv.Namespace, v1alpha1.ClusterServiceVersionKind)
	labels[aggregateToKubernetesPrefix+aggregateTo] = "true"
	labels[AggregationLabel(api, aggregateTo)] = "true"
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
// InterOperatorGroupOwnerConflict). roles and bindings are the Roles and RoleBindings of the
// CSV's namespace (what the cluster has); those that carry the CSV's owner labels are its own:
//
//   - when og targets exactly all namespaces ("", which the seed writes "*"): each of its Roles
//     lifted to a ClusterRole of the same name and labels, with its rules and get, list and
//     watch on namespaces, and each of its RoleBindings to a ClusterRoleBinding of the same
//     name and labels binding the ClusterRole (OLM's ensureSingletonRBAC: the names are the
//     Roles', <csv>-<service account>-<hash> as the InstallPlan and the CSV name them).
//   - otherwise: its Roles and RoleBindings copied into every other target namespace, owned
//     there by the CSV's copy and labelled olm.copiedFrom=<CSV namespace>. An OwnNamespace
//     group gets nothing.
//
// Everything generated carries the owner labels olm.owner, olm.owner.namespace,
// olm.owner.kind and olm.managed, as OLM puts them.
func AdditionalRBAC(csv *v1alpha1.ClusterServiceVersion, og *operatorsv1.OperatorGroup, roles []rbacv1.Role, bindings []rbacv1.RoleBinding) RBAC {
	if !generatesRBAC(csv, og) {
		return RBAC{}
	}
	targets := og.Status.Namespaces
	if IsAllNamespaces(targets) || (len(targets) == 1 && targets[0] == namespaceAllSeedSpelling) {
		return liftRBAC(csv, roles, bindings)
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

// liftRBAC is OLM's ensureSingletonRBAC: the CSV's own Roles and RoleBindings as ClusterRoles
// and ClusterRoleBindings of the same names and labels, the ClusterRoles also reading
// namespaces.
func liftRBAC(csv *v1alpha1.ClusterServiceVersion, roles []rbacv1.Role, bindings []rbacv1.RoleBinding) RBAC {
	var out RBAC
	for i := range roles {
		r := &roles[i]
		if !ownedByCSV(&r.ObjectMeta, csv) {
			continue
		}
		rules := append(clonePolicyRules(r.Rules), rbacv1.PolicyRule{
			Verbs: verbsView, APIGroups: []string{corev1.GroupName}, Resources: []string{"namespaces"},
		})
		out.ClusterRoles = append(out.ClusterRoles, rbacv1.ClusterRole{
			TypeMeta:   clusterRoleType,
			ObjectMeta: metav1.ObjectMeta{Name: r.Name, Labels: liftedLabels(r.Labels, csv)},
			Rules:      rules,
		})
	}
	for i := range bindings {
		b := &bindings[i]
		if !ownedByCSV(&b.ObjectMeta, csv) {
			continue
		}
		out.ClusterRoleBindings = append(out.ClusterRoleBindings, rbacv1.ClusterRoleBinding{
			TypeMeta:   clusterRoleBindingType,
			ObjectMeta: metav1.ObjectMeta{Name: b.Name, Labels: liftedLabels(b.Labels, csv)},
			Subjects:   slices.Clone(b.Subjects),
			RoleRef:    rbacv1.RoleRef{APIGroup: b.RoleRef.APIGroup, Kind: "ClusterRole", Name: b.RoleRef.Name},
		})
	}
	return out
}

// liftedLabels are a Role's labels on what is lifted from it, the CSV's owner labels sure to
// be among them (the CSV's cleanup finds the cluster-scoped objects by them).
func liftedLabels(l map[string]string, csv *v1alpha1.ClusterServiceVersion) map[string]string {
	out := maps.Clone(l)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, ownerLabels(csv.Name, csv.Namespace, v1alpha1.ClusterServiceVersionKind))
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

// base62SHA224 is OLM's hash for group role names: the SHA-224 of s as a number, in base 62.
func base62SHA224(s string) string {
	sum := sha256.Sum224([]byte(s))
	return new(big.Int).SetBytes(sum[:]).Text(62)
}

// shortHash is the hex FNV-64a hash of s.
func shortHash(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}
