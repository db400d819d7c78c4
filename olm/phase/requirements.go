package phase

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/olm/resolve"
)

// InstalledAlongsidePrefix prefixes the annotations an InstallPlan puts on a CRD it applies for
// a bundle: operatorframework.io/installed-alongside-<hash>: <namespace>/<csv>. A CRD owned by a
// CSV but last applied alongside one of the CSVs it replaces is not that CSV's version yet.
const InstalledAlongsidePrefix = "operatorframework.io/installed-alongside-"

// The requirement messages OLM writes (OLM pkg/controller/operators/olm/requirements.go), verbatim.
const (
	msgCRDNotPresent          = "CRD is not present"
	msgCRDVersionNotServed    = "CRD version not served"
	msgCRDNotAvailable        = "CRD is present but the Established condition is False (not available)"
	msgCRDPresent             = "CRD is present and Established condition is true"
	msgCRDAlongsideFormat     = "CRD installed alongside other CSV(s): %s"
	msgServerVersionError     = "Server version discovery error"
	msgServerVersionParse     = "Server version parsing error"
	msgCSVVersionParse        = "CSV version parsing error"
	msgMinKubeNotMetFormat    = "CSV version requirement not met: minKubeVersion (%s) > server version (%s)"
	msgMinKubeMetFormat       = "CSV minKubeVersion (%s) less than server version (%s)"
	msgNativeAPIPresent       = "Native API exists"
	msgNativeAPIMissing       = "Native API does not exist"
	msgSANotPresent           = "Service account does not exist"
	msgSAOwnedByOther         = "Service account is owned by another ClusterServiceVersion"
	msgPolicyRuleNotSatisfied = "Policy rule not satisfied for service account"
	msgRuleUnmarshallable     = "rule unmarshallable"
)

// The requirement states OLM writes for owned APIServices (not among the API's constants).
const (
	statusDeploymentFound    v1alpha1.StatusReason = "DeploymentFound"
	statusDeploymentNotFound v1alpha1.StatusReason = "DeploymentNotFound"
)

// Snapshot is what the requirement check needs to know about the cluster, read by the caller.
type Snapshot struct {
	// ServerVersion is the API server's gitVersion (v1.36.3); empty when discovery failed.
	ServerVersion string
	// CRDs are the CRDs the CSV owns or requires that exist, by name.
	CRDs map[string]*apiextensionsv1.CustomResourceDefinition
	// CSVs are the CSVs of the CSV's namespace (to tell which CRDs were applied for an older one).
	CSVs []v1alpha1.ClusterServiceVersion
	// Served are the group/version/kinds discovery serves, of those the CSV asks for (its
	// nativeAPIs and required APIServices).
	Served map[metav1.GroupVersionKind]bool
	// APIServices are the required APIServices that exist, by name, with whether they are Available.
	APIServices map[string]bool
	// ServiceAccounts are the service accounts of the CSV's namespace that its permissions name.
	ServiceAccounts map[string]*corev1.ServiceAccount
	// Roles, RoleBindings, ClusterRoles and ClusterRoleBindings are those carrying the CSV's
	// owner labels (install.OwnerSelector).
	Roles               []rbacv1.Role
	RoleBindings        []rbacv1.RoleBinding
	ClusterRoles        []rbacv1.ClusterRole
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
}

// Requirements is the outcome of checking a CSV's requirements.
type Requirements struct {
	// Met reports whether every requirement is met.
	Met bool
	// Statuses are OLM's status.requirementStatus entries, in a stable order: the Kubernetes
	// version, CRDs by name, required then owned APIServices, native APIs, service accounts by name.
	Statuses []v1alpha1.RequirementStatus
}

// CheckRequirements evaluates a CSV's requirements over a snapshot of the cluster as OLM does
// (olm-behaviour 3.3): minKubeVersion against the server's version, every owned and required
// CRD (present, the described version served, Established and NamesAccepted, and for an owned
// CRD not last applied for a CSV this one replaces), required APIServices and native APIs
// (served by discovery), owned APIServices (their deployment is in the strategy), and every
// service account of permissions and clusterPermissions (present, not owned by another CSV,
// and bound to the rules asked for).
//
// The RBAC check looks for the Role (ClusterRole) and binding that an InstallPlan and
// install.PermissionsFor make, by their generated name, owner labels and rules; olmsync
// creates them itself, so it does not fall back to evaluating RBAC that someone else wrote.
func CheckRequirements(csv *v1alpha1.ClusterServiceVersion, snap Snapshot) Requirements {
	r := APIRequirements(csv, snap)
	add := func(met bool, statuses []v1alpha1.RequirementStatus) {
		r.Met = r.Met && met
		r.Statuses = append(r.Statuses, statuses...)
	}
	add(apiServiceRequirements(csv, snap))
	add(nativeAPIRequirements(csv, snap))
	add(permissionRequirements(csv, snap))
	return r
}

// APIRequirements is the first part of CheckRequirements: minKubeVersion and every owned and
// required CRD. It is what `olmsync check`'s preview can decide offline, from the cluster's
// version and the CRDs that what is installed (and what approved plans bring) puts on the
// cluster; the rest (API services, native APIs, service accounts and their RBAC) needs the
// live cluster.
func APIRequirements(csv *v1alpha1.ClusterServiceVersion, snap Snapshot) Requirements {
	kubeMet, kube := MinKubeVersion(csv, snap.ServerVersion)
	crdsMet, crds := crdRequirements(csv, snap)
	return Requirements{Met: kubeMet && crdsMet, Statuses: append(kube, crds...)}
}

// MinKubeVersion is OLM's minKubeVersion requirement: met when the CSV names none or the
// server's version (its major.minor.patch) is not below it; else the requirement status
// OLM writes, with its message. The CSV controller checks it among the other requirements;
// `olmsync check`'s preview calls it with the cluster's version.
func MinKubeVersion(csv *v1alpha1.ClusterServiceVersion, serverVersion string) (bool, []v1alpha1.RequirementStatus) {
	want := csv.Spec.MinKubeVersion
	if want == "" {
		return true, nil
	}
	status := v1alpha1.RequirementStatus{
		Group: v1alpha1.GroupName, Version: v1alpha1.GroupVersion,
		Kind: v1alpha1.ClusterServiceVersionKind, Name: csv.Name,
	}
	notSatisfied := func(message string) (bool, []v1alpha1.RequirementStatus) {
		status.Status, status.Message = v1alpha1.RequirementStatusReasonPresentNotSatisfied, message
		return false, []v1alpha1.RequirementStatus{status}
	}
	if serverVersion == "" {
		return notSatisfied(msgServerVersionError)
	}
	// OLM compares the server's major.minor.patch, without a pre-release or build suffix.
	core, _, _ := strings.Cut(strings.TrimPrefix(serverVersion, "v"), "-")
	server, err := semver.Parse(core)
	if err != nil {
		return notSatisfied(msgServerVersionParse)
	}
	minimum, err := semver.Parse(strings.TrimPrefix(want, "v"))
	if err != nil {
		return notSatisfied(msgCSVVersionParse)
	}
	if minimum.GT(server) {
		return notSatisfied(fmt.Sprintf(msgMinKubeNotMetFormat, want, server))
	}
	status.Status, status.Message = v1alpha1.RequirementStatusReasonPresent, fmt.Sprintf(msgMinKubeMetFormat, want, serverVersion)
	return true, []v1alpha1.RequirementStatus{status}
}

// crdDescriptions returns the CSV's owned and required CRD descriptions by name (owned wins on
// a name listed in both), and the set of owned names.
func crdDescriptions(csv *v1alpha1.ClusterServiceVersion) (map[string]v1alpha1.CRDDescription, map[string]bool) {
	all := map[string]v1alpha1.CRDDescription{}
	owned := map[string]bool{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Required {
		all[d.Name] = d
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		all[d.Name] = d
		owned[d.Name] = true
	}
	return all, owned
}

func crdRequirements(csv *v1alpha1.ClusterServiceVersion, snap Snapshot) (bool, []v1alpha1.RequirementStatus) {
	descs, owned := crdDescriptions(csv)
	met := true
	var out []v1alpha1.RequirementStatus
	for _, name := range slices.Sorted(maps.Keys(descs)) {
		status := v1alpha1.RequirementStatus{
			Group: apiextensionsv1.GroupName, Version: "v1", Kind: "CustomResourceDefinition", Name: name,
		}
		status.Status, status.Message = crdStatus(csv, descs[name], owned[name], snap)
		if status.Status == v1alpha1.RequirementStatusReasonPresent {
			status.UUID = string(snap.CRDs[name].UID)
		} else {
			met = false
		}
		out = append(out, status)
	}
	return met, out
}

func crdStatus(csv *v1alpha1.ClusterServiceVersion, desc v1alpha1.CRDDescription, owned bool, snap Snapshot) (v1alpha1.StatusReason, string) {
	crd := snap.CRDs[desc.Name]
	if crd == nil {
		return v1alpha1.RequirementStatusReasonNotPresent, msgCRDNotPresent
	}
	if others := installedAlongsideOthers(crd, csv, snap.CSVs); owned && len(others) > 0 {
		return v1alpha1.RequirementStatusReasonPresentNotSatisfied, fmt.Sprintf(msgCRDAlongsideFormat, strings.Join(others, ", "))
	}
	if !servesVersion(crd, desc.Version) {
		return v1alpha1.RequirementStatusReasonNotPresent, msgCRDVersionNotServed
	}
	if !crdCondition(crd, apiextensionsv1.Established) || !crdCondition(crd, apiextensionsv1.NamesAccepted) {
		return v1alpha1.RequirementStatusReasonNotAvailable, msgCRDNotAvailable
	}
	return v1alpha1.RequirementStatusReasonPresent, msgCRDPresent
}

func servesVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			return v.Served
		}
	}
	return false
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// installedAlongsideOthers returns, sorted, the CSVs of the namespace that the CRD's
// installed-alongside annotations name and that csv replaces, directly or through others: the
// CRD on the cluster is theirs, csv's own has not been applied. None when the annotations name
// csv itself.
func installedAlongsideOthers(crd *apiextensionsv1.CustomResourceDefinition, csv *v1alpha1.ClusterServiceVersion, csvs []v1alpha1.ClusterServiceVersion) []string {
	named := map[string]bool{}
	for k, v := range crd.Annotations {
		if !strings.HasPrefix(k, InstalledAlongsidePrefix) {
			continue
		}
		ns, name, ok := strings.Cut(v, "/")
		if !ok || ns != csv.Namespace {
			continue
		}
		if name == csv.Name {
			return nil
		}
		named[name] = true
	}
	if len(named) == 0 {
		return nil
	}
	replaces := map[string]string{}
	for i := range csvs {
		if !groups.IsCopied(&csvs[i]) && csvs[i].Namespace == csv.Namespace {
			replaces[csvs[i].Name] = csvs[i].Spec.Replaces
		}
	}
	replaces[csv.Name] = csv.Spec.Replaces
	var out []string
	seen := map[string]bool{csv.Name: true}
	for current := csv.Spec.Replaces; current != "" && !seen[current]; current = replaces[current] {
		seen[current] = true
		if _, exists := replaces[current]; exists && named[current] {
			out = append(out, current)
		}
	}
	slices.Sort(out)
	return out
}

func apiServiceRequirements(csv *v1alpha1.ClusterServiceVersion, snap Snapshot) (bool, []v1alpha1.RequirementStatus) {
	met := true
	var out []v1alpha1.RequirementStatus
	for _, d := range csv.Spec.APIServiceDefinitions.Required {
		status := apiServiceStatus(d)
		gvk := metav1.GroupVersionKind{Group: d.Group, Version: d.Version, Kind: d.Kind}
		if available, exists := snap.APIServices[d.APIServiceName()]; snap.Served[gvk] && exists && available {
			status.Status = v1alpha1.RequirementStatusReasonPresent
		} else {
			status.Status = v1alpha1.RequirementStatusReasonNotPresent
			met = false
		}
		out = append(out, status)
	}
	deployments := map[string]bool{}
	for _, s := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		deployments[s.Name] = true
	}
	for _, d := range csv.Spec.APIServiceDefinitions.Owned {
		status := apiServiceStatus(d)
		if deployments[d.DeploymentName] {
			status.Status = statusDeploymentFound
		} else {
			status.Status = statusDeploymentNotFound
			met = false
		}
		out = append(out, status)
	}
	return met, out
}

func apiServiceStatus(d v1alpha1.APIServiceDescription) v1alpha1.RequirementStatus {
	return v1alpha1.RequirementStatus{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService", Name: d.APIServiceName()}
}

func nativeAPIRequirements(csv *v1alpha1.ClusterServiceVersion, snap Snapshot) (bool, []v1alpha1.RequirementStatus) {
	met := true
	var out []v1alpha1.RequirementStatus
	for _, gvk := range csv.Spec.NativeAPIs {
		status := v1alpha1.RequirementStatus{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Name: gvk.Version + "." + gvk.Group}
		if snap.Served[gvk] {
			status.Status, status.Message = v1alpha1.RequirementStatusReasonPresent, msgNativeAPIPresent
		} else {
			status.Status, status.Message = v1alpha1.RequirementStatusReasonNotPresent, msgNativeAPIMissing
			met = false
		}
		out = append(out, status)
	}
	return met, out
}

// permissionRequirements checks every service account of the CSV's permissions (in its
// namespace) and clusterPermissions (cluster-wide). A service account named in both gets one
// entry, with the dependents of both.
func permissionRequirements(csv *v1alpha1.ClusterServiceVersion, snap Snapshot) (bool, []v1alpha1.RequirementStatus) {
	byName := map[string]*v1alpha1.RequirementStatus{}
	met := true
	spec := csv.Spec.InstallStrategy.StrategySpec
	for _, scope := range []struct {
		cluster bool
		perms   []v1alpha1.StrategyDeploymentPermissions
	}{{false, spec.Permissions}, {true, spec.ClusterPermissions}} {
		for _, p := range scope.perms {
			status := byName[p.ServiceAccountName]
			if status == nil {
				status = &v1alpha1.RequirementStatus{
					Version: "v1", Kind: "ServiceAccount", Name: p.ServiceAccountName,
					Status: v1alpha1.RequirementStatusReasonPresent, Dependents: []v1alpha1.DependentStatus{},
				}
				byName[p.ServiceAccountName] = status
			}
			if !checkPermission(csv, snap, p, scope.cluster, status) {
				met = false
			}
		}
	}
	out := make([]v1alpha1.RequirementStatus, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[name])
	}
	return met, out
}

// checkPermission checks one permissions entry into status and reports whether it is met.
func checkPermission(csv *v1alpha1.ClusterServiceVersion, snap Snapshot, p v1alpha1.StrategyDeploymentPermissions, cluster bool, status *v1alpha1.RequirementStatus) bool {
	sa := snap.ServiceAccounts[p.ServiceAccountName]
	if sa == nil {
		status.Status, status.Message = v1alpha1.RequirementStatusReasonNotPresent, msgSANotPresent
		return false
	}
	if owners := install.OwnedByCSV(sa.OwnerReferences); len(owners) > 0 && !ownedBy(sa.OwnerReferences, csv) {
		status.Status, status.Message = v1alpha1.RequirementStatusReasonPresentNotSatisfied, msgSAOwnedByOther
		return false
	}
	satisfied := permissionCreated(csv, snap, p, cluster)
	scope := "namespaced"
	if cluster {
		scope = "cluster"
	}
	for _, rule := range p.Rules {
		dep := v1alpha1.DependentStatus{Group: rbacv1.GroupName, Kind: "PolicyRule", Version: "v1"}
		raw, err := json.Marshal(rule)
		switch {
		case err != nil:
			dep.Status, dep.Message = v1alpha1.DependentStatusReasonNotSatisfied, msgRuleUnmarshallable
		case satisfied:
			dep.Status, dep.Message = v1alpha1.DependentStatusReasonSatisfied, scope+" rule:"+string(raw)
		default:
			dep.Status, dep.Message = v1alpha1.DependentStatusReasonNotSatisfied, scope+" rule:"+string(raw)
			status.Status, status.Message = v1alpha1.RequirementStatusReasonPresentNotSatisfied, msgPolicyRuleNotSatisfied
		}
		status.Dependents = append(status.Dependents, dep)
	}
	return satisfied
}

func ownedBy(refs []metav1.OwnerReference, csv *v1alpha1.ClusterServiceVersion) bool {
	for _, r := range refs {
		if r.Kind == v1alpha1.ClusterServiceVersionKind && r.UID == csv.UID {
			return true
		}
	}
	return false
}

// permissionCreated reports whether the role and binding an InstallPlan (or
// install.PermissionsFor) makes for p exist: a (Cluster)Role of the generated name with the
// CSV's owner labels and p's rules, and a (Cluster)RoleBinding of the same name binding that
// role to p's service account. The name ends with a hash of p, so a changed permission is not
// met by the RBAC of the old one.
func permissionCreated(csv *v1alpha1.ClusterServiceVersion, snap Snapshot, p v1alpha1.StrategyDeploymentPermissions, cluster bool) bool {
	owner := install.OwnerSelector(csv)
	// The name ends with a hash of the CSV and the permission entry: a changed entry is not
	// met by the RBAC of the old one. (olm.permissions.hash, a hash of the content, is not
	// looked at: RBAC an earlier olmsync wrote carries another value of it.)
	owned := func(m *metav1.ObjectMeta, name string) bool {
		if m.Name != name {
			return false
		}
		for k, v := range owner {
			if m.Labels[k] != v {
				return false
			}
		}
		return true
	}
	bindsTo := func(ref rbacv1.RoleRef, subjects []rbacv1.Subject, kind, name string) bool {
		return ref.Kind == kind && ref.Name == name && slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == p.ServiceAccountName && s.Namespace == csv.Namespace
		})
	}
	if cluster {
		name := resolve.ClusterRoleName(csv.Name, csv.Namespace, p)
		role := slices.IndexFunc(snap.ClusterRoles, func(r rbacv1.ClusterRole) bool {
			return owned(&r.ObjectMeta, name) && equality.Semantic.DeepEqual(r.Rules, p.Rules)
		})
		bound := slices.ContainsFunc(snap.ClusterRoleBindings, func(b rbacv1.ClusterRoleBinding) bool {
			return owned(&b.ObjectMeta, name) && bindsTo(b.RoleRef, b.Subjects, "ClusterRole", name)
		})
		return role >= 0 && bound
	}
	name := resolve.RoleName(csv.Name, p)
	role := slices.IndexFunc(snap.Roles, func(r rbacv1.Role) bool {
		return r.Namespace == csv.Namespace && owned(&r.ObjectMeta, name) && equality.Semantic.DeepEqual(r.Rules, p.Rules)
	})
	bound := slices.ContainsFunc(snap.RoleBindings, func(b rbacv1.RoleBinding) bool {
		return b.Namespace == csv.Namespace && owned(&b.ObjectMeta, name) && bindsTo(b.RoleRef, b.Subjects, "Role", name)
	})
	return role >= 0 && bound
}
