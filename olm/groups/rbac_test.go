package groups_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/resolve"
)

var (
	clusterRoleTM        = metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}
	clusterRoleBindingTM = metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}
)

// The aggregation labels of the two APIs the tests use: olm.opgroup.permissions/aggregate-to-
// <hex FNV-64a of Kind.version.group>-<suffix>, the hashes computed apart from the code.
const (
	etcdAPIHash = "c571d720f17289d3" // EtcdCluster.v1beta2.etcd.database.coreos.com
	pkgAPIHash  = "4bca9f23e412d79d" // PackageManifest.v1.packages.operators.coreos.com
)

// TestGroupClusterRoles holds OLM's names (pkg/controller/operators/olm/operator_test.go,
// "MatchingNamespace/NoCSVs/CreatesClusterRoles": group operator-group-1 in operator-ns) and
// its aggregation: one selector per API, sorted; none without APIs.
func TestGroupClusterRoles(t *testing.T) {
	group := og("operator-ns", "operator-group-1", global())
	owner := map[string]string{
		"olm.owner": "operator-group-1", "olm.owner.namespace": "operator-ns",
		"olm.owner.kind": "OperatorGroup", "olm.managed": "true",
	}
	role := func(name string, rule *rbacv1.AggregationRule) rbacv1.ClusterRole {
		return rbacv1.ClusterRole{TypeMeta: clusterRoleTM, ObjectMeta: metav1.ObjectMeta{Name: name, Labels: owner}, AggregationRule: rule}
	}
	const (
		admin = "olm.og.operator-group-1.admin-8rdAjL0E35JMMAkOqYmoorzjpIIihfnj3DcgDU"
		edit  = "olm.og.operator-group-1.edit-9lBEUxqAYE7CX7wZfFEPYutTfQTo43WarB08od"
		view  = "olm.og.operator-group-1.view-1l6ymczPK5SceF4d0DCtAnWZuvmKn6s8oBUxHr"
	)
	want := []rbacv1.ClusterRole{role(admin, nil), role(edit, nil), role(view, nil)}
	if diff := cmp.Diff(want, groups.GroupClusterRoles(&group, nil)); diff != "" {
		t.Errorf("GroupClusterRoles without APIs (-want +got):\n%s", diff)
	}
	apis := groups.NewAPISet(
		groups.API{Group: "packages.operators.coreos.com", Version: "v1", Kind: "PackageManifest"},
		groups.API{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"},
	)
	selectors := func(suffix string) *rbacv1.AggregationRule {
		return &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"olm.opgroup.permissions/aggregate-to-" + pkgAPIHash + "-" + suffix: "true"}},
			{MatchLabels: map[string]string{"olm.opgroup.permissions/aggregate-to-" + etcdAPIHash + "-" + suffix: "true"}},
		}}
	}
	want = []rbacv1.ClusterRole{role(admin, selectors("admin")), role(edit, selectors("edit")), role(view, selectors("view"))}
	if diff := cmp.Diff(want, groups.GroupClusterRoles(&group, apis)); diff != "" {
		t.Errorf("GroupClusterRoles with two APIs (-want +got):\n%s", diff)
	}
}

// TestGroupClusterRolesOfSameNamedGroups: groups of one name in two namespaces (og, and
// global-operators, are common names) have roles of their own.
func TestGroupClusterRolesOfSameNamedGroups(t *testing.T) {
	a, b := og("team-a", "og", global()), og("team-b", "og", global())
	for i, ra := range groups.GroupClusterRoles(&a, nil) {
		rb := groups.GroupClusterRoles(&b, nil)[i]
		if ra.Name == rb.Name {
			t.Errorf("both groups named og have ClusterRole %s", ra.Name)
		}
		if !strings.HasPrefix(ra.Name, "olm.og.og.") || !strings.HasPrefix(rb.Name, "olm.og.og.") {
			t.Errorf("names %s, %s: want olm.og.og.<suffix>-<hash>", ra.Name, rb.Name)
		}
	}
}

// TestGroupRoleAPIs: the group's olm.providedAPIs and the APIs of the CSVs of its namespace
// that are not copies, as OLM's providedAPIsFromCSVs.
func TestGroupRoleAPIs(t *testing.T) {
	group := og("ops", "g", global(), provides("Thing.v1.example.com"))
	csvs := []v1alpha1.ClusterServiceVersion{
		*csv("ops", "etcd", etcdCluster, supports(all)),
		*csv("ops", "copied", ownsCRD("copies.example.com", "v1", "Copy"), labels("olm.copiedFrom", "x")),
		*csv("apps", "elsewhere", ownsCRD("others.example.com", "v1", "Other")),
		*csv("ops", "broken", ownsCRD("nodot", "v1", "Broken")),
	}
	got := groups.GroupRoleAPIs(&group, csvs).String()
	if want := "EtcdCluster.v1beta2.etcd.database.coreos.com,Thing.v1.example.com"; got != want {
		t.Errorf("GroupRoleAPIs = %q, want %q", got, want)
	}
}

func TestProvidedAPIClusterRoles(t *testing.T) {
	member := csv("operators", "etcdoperator.v0.9.4", etcdCluster,
		ownsAPIService("packages.operators.coreos.com", "v1", "PackageManifest", "packagemanifests"),
		supports(all), status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful))
	group := og("operators", "global-operators", global())
	labels := func(suffix string) map[string]string {
		return map[string]string{
			"olm.owner": "etcdoperator.v0.9.4", "olm.owner.namespace": "operators",
			"olm.owner.kind": "ClusterServiceVersion", "olm.managed": "true",
			"rbac.authorization.k8s.io/aggregate-to-" + suffix: "true",
		}
	}
	role := func(name, suffix, apiHash string, rule rbacv1.PolicyRule) rbacv1.ClusterRole {
		l := labels(suffix)
		l["olm.opgroup.permissions/aggregate-to-"+apiHash+"-"+suffix] = "true"
		return rbacv1.ClusterRole{
			TypeMeta:   clusterRoleTM,
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
			Rules:      []rbacv1.PolicyRule{rule},
		}
	}
	on := func(group, resource string, verbs ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: []string{resource}}
	}
	const etcdGroup = "etcd.database.coreos.com"
	const pkgGroup = "packages.operators.coreos.com"
	want := []rbacv1.ClusterRole{
		role("etcdclusters.etcd.database.coreos.com-v1beta2-admin", "admin", etcdAPIHash, on(etcdGroup, "etcdclusters", "*")),
		role("etcdclusters.etcd.database.coreos.com-v1beta2-edit", "edit", etcdAPIHash, on(etcdGroup, "etcdclusters", "create", "update", "patch", "delete")),
		role("etcdclusters.etcd.database.coreos.com-v1beta2-view", "view", etcdAPIHash, on(etcdGroup, "etcdclusters", "get", "list", "watch")),
		role("etcdclusters.etcd.database.coreos.com-v1beta2-crdview", "view", etcdAPIHash, rbacv1.PolicyRule{
			Verbs: []string{"get"}, APIGroups: []string{"apiextensions.k8s.io"},
			Resources: []string{"customresourcedefinitions"}, ResourceNames: []string{"etcdclusters.etcd.database.coreos.com"},
		}),
		role("packagemanifests-v1-admin", "admin", pkgAPIHash, on(pkgGroup, "packagemanifests", "*")),
		role("packagemanifests-v1-edit", "edit", pkgAPIHash, on(pkgGroup, "packagemanifests", "create", "update", "patch", "delete")),
		role("packagemanifests-v1-view", "view", pkgAPIHash, on(pkgGroup, "packagemanifests", "get", "list", "watch")),
	}
	got, err := groups.ProvidedAPIClusterRoles(member, &group)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProvidedAPIClusterRoles (-want +got):\n%s", diff)
	}
}

func TestProvidedAPIClusterRolesOnlyForAllNamespacesMembers(t *testing.T) {
	succeeded := status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
	tests := []struct {
		name  string
		csv   *v1alpha1.ClusterServiceVersion
		group string // "global" or "own"
		want  int
	}{
		{"all-namespaces member", csv("ops", "c", etcdCluster, supports(all), succeeded), "global", 4},
		{"a pending member too (seed: on becoming a member)", csv("ops", "c", etcdCluster, supports(all), status(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown)), "global", 4},
		{"group not global", csv("ops", "c", etcdCluster, everyMode, succeeded), "own", 0},
		{"AllNamespaces unsupported", csv("ops", "c", etcdCluster, supports(own), status(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonUnsupportedOperatorGroup)), "global", 0},
		{"failed with InterOperatorGroupOwnerConflict", csv("ops", "c", etcdCluster, supports(all), status(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict)), "global", 0},
		{"a copy", csv("ops", "c", etcdCluster, supports(all), labels("olm.copiedFrom", "x"), succeeded), "global", 0},
		{"in another namespace", csv("apps", "c", etcdCluster, supports(all), succeeded), "global", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			group := og("ops", "g", targets("ops"))
			if tt.group == "global" {
				group = og("ops", "g", global())
			}
			got, err := groups.ProvidedAPIClusterRoles(tt.csv, &group)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want {
				t.Errorf("got %d roles, want %d", len(got), tt.want)
			}
		})
	}
}

func TestLongNamesStayValid(t *testing.T) {
	longGroup := strings.Repeat("very-long-api-group.", 12) + "example.com" // 251 characters
	longName := strings.Repeat("g", 100)
	member := csv("ops", strings.Repeat("c", 80)+".v1", supports(all),
		ownsCRD("things."+longGroup, "v1", "Thing"), ownsCRD("others."+longGroup, "v1", "Thing2"))
	group := og("ops", longName, global())
	roles, err := groups.ProvidedAPIClusterRoles(member, &group)
	if err != nil {
		t.Fatal(err)
	}
	apis, err := groups.ProvidedAPIs(member)
	if err != nil {
		t.Fatal(err)
	}
	roles = append(roles, groups.GroupClusterRoles(&group, apis)...)
	seen := map[string]bool{}
	for _, r := range roles {
		if len(r.Name) > 253 {
			t.Errorf("name of %d characters: %s", len(r.Name), r.Name)
		}
		if seen[r.Name] {
			t.Errorf("two roles named %s", r.Name)
		}
		seen[r.Name] = true
		for k, v := range r.Labels {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("%s: label %s=%q: %v", r.Name, k, v, errs)
			}
		}
		if r.AggregationRule != nil {
			for _, sel := range r.AggregationRule.ClusterRoleSelectors {
				for k, v := range sel.MatchLabels {
					if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
						t.Errorf("%s: selector %s=%q: %v", r.Name, k, v, errs)
					}
				}
			}
		}
	}
	if !strings.HasSuffix(roles[0].Name, "-admin") || !strings.HasSuffix(roles[3].Name, "-crdview") {
		t.Errorf("shortened names lost their suffix: %s, %s", roles[0].Name, roles[3].Name)
	}
	// The group's roles select what its members' roles carry, shortened or not.
	groupAdmin := groups.GroupClusterRoles(&group, apis)[0]
	selected := groupAdmin.AggregationRule.ClusterRoleSelectors[0].MatchLabels
	for k, v := range selected {
		if roles[0].Labels[k] != v {
			t.Errorf("%s selects %s=%q, the per-API admin role carries %q", groupAdmin.Name, k, v, roles[0].Labels[k])
		}
	}
}

func TestLabelValue(t *testing.T) {
	if got := groups.LabelValue("short.name"); got != "short.name" {
		t.Errorf("LabelValue(short) = %q", got)
	}
	a, b := strings.Repeat("a", 70), strings.Repeat("a", 69)+"b"
	la, lb := groups.LabelValue(a), groups.LabelValue(b)
	if la == lb {
		t.Errorf("two long names share the label value %q", la)
	}
	for _, v := range []string{la, lb} {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("LabelValue gave invalid %q: %v", v, errs)
		}
	}
}

// TestAdditionalRBACGlobal: in a global group, the CSV's own Roles and RoleBindings are lifted
// to ClusterRoles and ClusterRoleBindings named after them, as OLM's ensureSingletonRBAC does
// — <csv>-<service account>-<hash>, the names the InstallPlan and the CSV give the Roles
// (resolve.PermissionObjects) — with their labels, the ClusterRoles also reading namespaces.
// Roles of another CSV are not lifted. (Issue 31: olmsync named them <csv>-<service account>.)
func TestAdditionalRBACGlobal(t *testing.T) {
	rules := []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	other := []rbacv1.PolicyRule{{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"secrets"}}}
	member := csv("operators", "op.v1", supports(all), status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful),
		permissions(
			v1alpha1.StrategyDeploymentPermissions{ServiceAccountName: "op", Rules: rules},
			v1alpha1.StrategyDeploymentPermissions{ServiceAccountName: "op", Rules: other},
		))
	var roles []rbacv1.Role
	var bindings []rbacv1.RoleBinding
	for _, o := range resolve.PermissionObjects(member) {
		switch o := o.(type) {
		case *rbacv1.Role:
			o.Labels["olm.managed"] = "true" // as the InstallPlan and the CSV write them
			roles = append(roles, *o)
		case *rbacv1.RoleBinding:
			o.Labels["olm.managed"] = "true"
			bindings = append(bindings, *o)
		}
	}
	if len(roles) != 2 || len(bindings) != 2 {
		t.Fatalf("%d roles, %d bindings", len(roles), len(bindings))
	}
	stranger := roles[0].DeepCopy()
	stranger.Name, stranger.Labels = "someone-elses", map[string]string{"olm.owner": "other.v1", "olm.owner.namespace": "operators", "olm.owner.kind": "ClusterServiceVersion"}
	var want groups.RBAC
	for i, r := range roles {
		if !strings.HasPrefix(r.Name, "op.v1-op-") || r.Name == "op.v1-op" {
			t.Fatalf("role %s: not named as OLM names it", r.Name)
		}
		want.ClusterRoles = append(want.ClusterRoles, rbacv1.ClusterRole{
			TypeMeta: clusterRoleTM, ObjectMeta: metav1.ObjectMeta{Name: r.Name, Labels: r.Labels},
			Rules: append(slices.Clone(r.Rules), rbacv1.PolicyRule{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"namespaces"}}),
		})
		b := bindings[i]
		want.ClusterRoleBindings = append(want.ClusterRoleBindings, rbacv1.ClusterRoleBinding{
			TypeMeta: clusterRoleBindingTM, ObjectMeta: metav1.ObjectMeta{Name: b.Name, Labels: b.Labels},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "op", Namespace: "operators"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: b.RoleRef.Name},
		})
	}
	for _, spelling := range []string{"", "*"} {
		group := og("operators", "global-operators", targets(spelling))
		got := groups.AdditionalRBAC(member, &group, append(slices.Clone(roles), *stranger), bindings)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("targets [%q]: AdditionalRBAC (-want +got):\n%s", spelling, diff)
		}
	}
}

func TestAdditionalRBACCopiesOwnedRoles(t *testing.T) {
	member := csv("ops", "op.v1", everyMode, status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful))
	ownedBy := func(name, ns string, extra ...string) metav1.ObjectMeta {
		l := map[string]string{"olm.owner": name, "olm.owner.namespace": ns}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return metav1.ObjectMeta{Name: "op-role", Namespace: "ops", Labels: l, Annotations: map[string]string{"note": "kept"}}
	}
	rule := rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"etcd.database.coreos.com"}, Resources: []string{"etcdclusters"}}
	roles := []rbacv1.Role{
		{ObjectMeta: ownedBy("op.v1", "ops", "olm.owner.kind", "ClusterServiceVersion", "app", "etcd"), Rules: []rbacv1.PolicyRule{rule}},
		{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: "ops", Labels: map[string]string{"olm.owner": "other.v1", "olm.owner.namespace": "ops"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "wrong-kind", Namespace: "ops", Labels: map[string]string{"olm.owner": "op.v1", "olm.owner.namespace": "ops", "olm.owner.kind": "OperatorGroup"}}},
	}
	bm := ownedBy("op.v1", "ops")
	bm.Name = "op-binding"
	bindings := []rbacv1.RoleBinding{{
		ObjectMeta: bm,
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "op", Namespace: "ops"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "op-role"},
	}}
	copied := func(ns string, extra ...string) map[string]string {
		l := map[string]string{
			"olm.owner": "op.v1", "olm.owner.namespace": ns, "olm.owner.kind": "ClusterServiceVersion",
			"olm.managed": "true", "olm.copiedFrom": "ops",
		}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return l
	}
	role := func(ns string) rbacv1.Role {
		return rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: "op-role", Namespace: ns, Labels: copied(ns, "app", "etcd"), Annotations: map[string]string{"note": "kept"}},
			Rules:      []rbacv1.PolicyRule{rule},
		}
	}
	binding := func(ns string) rbacv1.RoleBinding {
		return rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "op-binding", Namespace: ns, Labels: copied(ns), Annotations: map[string]string{"note": "kept"}},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "op", Namespace: "ops"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "op-role"},
		}
	}
	tests := []struct {
		name    string
		targets []string
		csv     *v1alpha1.ClusterServiceVersion
		want    groups.RBAC
	}{
		{
			name: "into every target but the operator's namespace", targets: []string{"b", "ops", "a"}, csv: member,
			want: groups.RBAC{Roles: []rbacv1.Role{role("a"), role("b")}, RoleBindings: []rbacv1.RoleBinding{binding("a"), binding("b")}},
		},
		{name: "own namespace only: nothing", targets: []string{"ops"}, csv: member},
		{
			name: "a member failed with a conflict: nothing", targets: []string{"a"},
			csv: csv("ops", "op.v1", everyMode, status(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			group := og("ops", "g", targets(tt.targets...))
			got := groups.AdditionalRBAC(tt.csv, &group, roles, bindings)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AdditionalRBAC (-want +got):\n%s", diff)
			}
		})
	}
	// The input objects are left alone.
	if roles[0].Namespace != "ops" || roles[0].Labels["olm.owner.namespace"] != "ops" {
		t.Error("AdditionalRBAC changed its input")
	}
}
