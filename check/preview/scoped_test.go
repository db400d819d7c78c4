package preview

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/report"
)

// The Role and RoleBinding that give the ServiceAccount installer every right in team-x.
const installerRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: installer, namespace: team-x}
rules:
- {apiGroups: ["*"], resources: ["*"], verbs: ["*"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: installer, namespace: team-x}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: installer}
subjects:
- {kind: ServiceAccount, name: installer, namespace: team-x}
`

// TestPreviewScopedInstall: team-x's OperatorGroup names the ServiceAccount installer. With
// no Role for it, the preview says what the InstallPlan controller does: the plan stays
// Installing with the controller's message — byte for byte what the controller's envtest
// test (reconcile/olm/installplan TestScopedInstall) reads from a real kube-apiserver — and
// the CSV, whose step is refused, is not installed (end: no installedCSV, no outcome). With a
// Role and RoleBinding granting the rights, in Git or in the cluster state, the plan
// completes and the CSV is installed.
func TestPreviewScopedInstall(t *testing.T) {
	og := "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og, namespace: team-x}\n" +
		"spec:\n  targetNamespaces: [team-x]\n  serviceAccountName: installer\n"
	state := func(rbac bool) *ClusterState {
		st := &ClusterState{
			Namespaces:      []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "team-x"}}},
			ServiceAccounts: []corev1.ServiceAccount{{ObjectMeta: metav1.ObjectMeta{Namespace: "team-x", Name: "installer"}}},
		}
		if rbac {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "rbac.yaml"), []byte(installerRBAC), 0o600); err != nil {
				t.Fatal(err)
			}
			loaded, err := LoadClusterState(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(loaded.Roles) != 1 || len(loaded.RoleBindings) != 1 || loaded.Roles[0].Namespace != "team-x" || loaded.RoleBindings[0].Subjects[0].Name != "installer" {
				t.Fatalf("state read %+v %+v", loaded.Roles, loaded.RoleBindings)
			}
			st.Roles, st.RoleBindings = loaded.Roles, loaded.RoleBindings
		}
		return st
	}
	tests := []struct {
		name        string
		gitRBAC     bool
		clusterRBAC bool
		refused     bool
	}{
		{name: "no rights", refused: true},
		{name: "a role in Git", gitRBAC: true},
		{name: "a role in the cluster", clusterRBAC: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := files{
				"olmsync.yaml":                    "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
				"cluster-scope/group.yaml":        og,
				"cluster-scope/subscription.yaml": sub("team-x", "etcd", "etcd", "stable", "community-operators", "Automatic"),
			}
			if tt.gitRBAC {
				repo["cluster-scope/rbac.yaml"] = installerRBAC
			}
			_, rep := checkWith(t, writeTree(t, repo), Options{
				Catalogs:      []CatalogSpec{fixtureCatalog},
				ClusterStates: map[string]*ClusterState{"": state(tt.clusterRBAC)},
			})
			var got *report.SubscriptionPreview
			for i := range rep.Subscriptions {
				if rep.Subscriptions[i].Namespace == "team-x" {
					got = &rep.Subscriptions[i]
				}
			}
			if got == nil || got.Plan == nil || got.End == nil {
				t.Fatalf("preview of team-x/etcd: %+v", got)
			}
			next := got.Resolution.Next
			if next == "" {
				t.Fatalf("resolution %+v", got.Resolution)
			}
			if !tt.refused {
				if got.Plan.Phase != "Complete" || got.Plan.Message != "" || got.End.InstalledCSV != next || got.End.Plan != nil || got.End.Outcome == nil {
					t.Errorf("plan %+v, end %+v: want the plan complete and %s installed", got.Plan, got.End, next)
				}
				return
			}
			// The executor's error inside the controller's retry message (reconcile/olm/installplan
			// scoped_test.go forbiddenCSV holds the same bytes from kube-apiserver).
			want := fmt.Sprintf(`retrying execution due to error: error creating csv %s: clusterserviceversions.operators.coreos.com is forbidden: User "system:serviceaccount:team-x:installer" cannot create resource "clusterserviceversions" in API group "operators.coreos.com" in the namespace "team-x"`, next)
			if got.Plan.Phase != "Installing" || got.Plan.Message != want {
				t.Errorf("plan %+v\nwant Installing with %s", got.Plan, want)
			}
			if p := got.End.Plan; p == nil || p.Phase != "Installing" || p.Message != want {
				t.Errorf("end plan %+v", p)
			}
			if got.End.CurrentCSV != next || got.End.InstalledCSV != "" || got.End.Outcome != nil || got.Outcome != nil {
				t.Errorf("end %+v, outcome %+v: want %s current, nothing installed", got.End, got.Outcome, next)
			}
		})
	}
}

// TestLoadClusterStateRBAC: a state folder keeps Roles, ClusterRoles and their bindings,
// Lists included; one that does not decode is an error naming its file and line.
func TestLoadClusterStateRBAC(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("rbac.yaml", installerRBAC+`---
apiVersion: v1
kind: List
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: c}
  rules: [{apiGroups: [""], resources: [secrets], verbs: [get]}]
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata: {name: c}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: c}
  subjects: [{kind: Group, name: "system:serviceaccounts"}]
`)
	st, err := LoadClusterState(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}
	if len(st.Roles) != 1 || len(st.RoleBindings) != 1 || len(st.ClusterRoles) != 1 || len(st.ClusterRoleBindings) != 1 ||
		fmt.Sprint(st.ClusterRoles[0].Rules) != fmt.Sprint([]rbacv1.PolicyRule{want}) {
		t.Errorf("state %+v %+v %+v %+v", st.Roles, st.RoleBindings, st.ClusterRoles, st.ClusterRoleBindings)
	}
	write("bad.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules: nope\n")
	_, err = LoadClusterState(dir)
	if err == nil || err.Error() != fmt.Sprintf("cluster state %s:1: decode Role: json: cannot unmarshal string into Go struct field Role.rules of type []v1.PolicyRule", filepath.Join(dir, "bad.yaml")) {
		t.Errorf("error %v", err)
	}
}

// TestReadClusterRBAC: Roles, ClusterRoles and their bindings are read from a live cluster;
// a user who may read everything else but not them leaves them unread (RBACUnread) instead of
// failing the read, and the preview then does not judge a scoped install and says so.
func TestReadClusterRBAC(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	dir := t.TempDir()
	// A namespace of its own: the package's other live tests create team-x.
	if err := os.WriteFile(filepath.Join(dir, "rbac.yaml"), []byte(strings.ReplaceAll(installerRBAC, "team-x", "team-rbac")), 0o600); err != nil {
		t.Fatal(err)
	}
	folder, err := LoadClusterState(dir)
	if err != nil {
		t.Fatal(err)
	}
	reader := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "preview-reader-no-rbac"},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"", "apps", "operators.coreos.com", "apiextensions.k8s.io", "olm.operatorframework.io"},
			Resources: []string{"*"}, Verbs: []string{"get", "list"},
		}},
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-rbac"}},
		&folder.Roles[0], &folder.RoleBindings[0], reader,
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "preview-reader-no-rbac"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "preview-reader"}},
		},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ReadCluster(ctx, env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if st.RBACUnread != "" || !slices.ContainsFunc(st.Roles, func(r rbacv1.Role) bool { return r.Namespace == "team-rbac" && r.Name == "installer" }) ||
		!slices.ContainsFunc(st.RoleBindings, func(b rbacv1.RoleBinding) bool { return b.Namespace == "team-rbac" && b.Name == "installer" }) ||
		!slices.ContainsFunc(st.ClusterRoles, func(r rbacv1.ClusterRole) bool { return r.Name == reader.Name }) ||
		!slices.ContainsFunc(st.ClusterRoleBindings, func(b rbacv1.ClusterRoleBinding) bool { return b.Name == reader.Name }) {
		t.Errorf("RBAC read: unread %q, %d roles, %d bindings, %d cluster roles, %d cluster role bindings", st.RBACUnread, len(st.Roles), len(st.RoleBindings), len(st.ClusterRoles), len(st.ClusterRoleBindings))
	}

	cfg, err := kube.Config(env.UserKubeconfig(t, envtest.User{Name: "preview-reader"}), "")
	if err != nil {
		t.Fatal(err)
	}
	limited, err := ReadCluster(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(limited.RBACUnread, "forbidden") || len(limited.Roles)+len(limited.RoleBindings)+len(limited.ClusterRoles)+len(limited.ClusterRoleBindings) != 0 {
		t.Fatalf("unread %q, %d roles", limited.RBACUnread, len(limited.Roles))
	}
	// What the preview needs beyond RBAC, whatever the package's other tests left on the
	// shared API server (they make team-x, with a group and a Subscription): team-rbac's
	// account, and no list of CatalogSources to miss the fixture catalog's.
	limited.ServiceAccounts = append(limited.ServiceAccounts, corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-rbac", Name: "installer"}})
	limited.CatalogSourcesListed, limited.CatalogSources = false, nil
	repo := files{
		"olmsync.yaml": "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/group.yaml": "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og, namespace: team-rbac}\n" +
			"spec:\n  targetNamespaces: [team-rbac]\n  serviceAccountName: installer\n",
		"cluster-scope/subscription.yaml": sub("team-rbac", "etcd", "etcd", "stable", "community-operators", "Automatic"),
	}
	_, rep := checkWith(t, writeTree(t, repo), Options{Catalogs: []CatalogSpec{fixtureCatalog}, ClusterStates: map[string]*ClusterState{"": limited}})
	warned := slices.ContainsFunc(rep.Warnings, func(w report.Warning) bool {
		return strings.Contains(w.Message, "could not be read") && strings.Contains(w.Message, "ServiceAccount installer of OperatorGroup team-rbac/og")
	})
	if !warned {
		t.Errorf("warnings %+v: want the scoped install not judged", rep.Warnings)
	}
	for _, s := range rep.Subscriptions {
		if s.Namespace == "team-rbac" && (s.Plan == nil || s.Plan.Phase != "Complete") {
			t.Errorf("plan %+v: not judged, want it taken to complete", s.Plan)
		}
	}
}

// TestPreviewScopedInstallRefusedAfterTheCSV: the account may create CSVs and nothing else.
// The executor creates the CSV (the first step) and is refused the ServiceAccount its
// permissions name: the plan stays Installing with that refusal, and the CSV is installed —
// the Subscription's end has it, with its outcome.
func TestPreviewScopedInstallRefusedAfterTheCSV(t *testing.T) {
	catalog := t.TempDir()
	gittest.Write(t, catalog, files{
		"gadgets/gadgets.package.yaml": "packageName: gadgets\ndefaultChannel: stable\nchannels:\n- {name: stable, currentCSV: gadgets.v0.1.0}\n",
		"gadgets/0.1.0/gadgets.clusterserviceversion.yaml": `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: gadgets.v0.1.0}
spec:
  displayName: gadgets
  version: 0.1.0
  installModes:
  - {type: OwnNamespace, supported: true}
  - {type: SingleNamespace, supported: true}
  - {type: MultiNamespace, supported: false}
  - {type: AllNamespaces, supported: false}
  install:
    strategy: deployment
    spec:
      permissions:
      - serviceAccountName: gadgets-operator
        rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
      deployments:
      - name: gadgets
        spec:
          selector: {matchLabels: {app: gadgets}}
          template:
            metadata: {labels: {app: gadgets}}
            spec:
              serviceAccountName: gadgets-operator
              containers:
              - {name: manager, image: example.com/gadgets:v0.1.0}
`,
	})
	repo := files{
		"olmsync.yaml": "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/group.yaml": "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og, namespace: team-rbac}\n" +
			"spec:\n  targetNamespaces: [team-rbac]\n  serviceAccountName: installer\n",
		"cluster-scope/subscription.yaml": sub("team-rbac", "gadgets", "gadgets", "stable", "gadgets-catalog", "Automatic"),
		"cluster-scope/rbac.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: installer, namespace: team-rbac}
rules:
- {apiGroups: [operators.coreos.com], resources: [clusterserviceversions], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: installer, namespace: team-rbac}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: installer}
subjects:
- {kind: ServiceAccount, name: installer, namespace: team-rbac}
`,
	}
	state := &ClusterState{
		Namespaces:      []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "team-rbac"}}},
		ServiceAccounts: []corev1.ServiceAccount{{ObjectMeta: metav1.ObjectMeta{Namespace: "team-rbac", Name: "installer"}}},
	}
	_, rep := checkWith(t, writeTree(t, repo), Options{
		Catalogs:      []CatalogSpec{{Name: "gadgets-catalog", Source: catalog}},
		ClusterStates: map[string]*ClusterState{"": state},
	})
	var got *report.SubscriptionPreview
	for i := range rep.Subscriptions {
		if rep.Subscriptions[i].Name == "gadgets" {
			got = &rep.Subscriptions[i]
		}
	}
	if got == nil || got.Plan == nil || got.End == nil {
		t.Fatalf("preview of team-rbac/gadgets: %+v", got)
	}
	want := `retrying execution due to error: error creating service account: gadgets-operator: serviceaccounts is forbidden: User "system:serviceaccount:team-rbac:installer" cannot create resource "serviceaccounts" in API group "" in the namespace "team-rbac"`
	if got.Plan.Phase != "Installing" || got.Plan.Message != want {
		t.Errorf("plan %+v\nwant Installing with %s", got.Plan, want)
	}
	if p := got.End.Plan; p == nil || p.Message != want {
		t.Errorf("end plan %+v", p)
	}
	if got.End.InstalledCSV != "gadgets.v0.1.0" || got.End.Outcome == nil || got.Outcome == nil {
		t.Errorf("end %+v, outcome %+v: want gadgets.v0.1.0 installed", got.End, got.Outcome)
	}
}

// TestPreviewPlanStuckForTheGroup is issue 31's OLM002: a group whose selector matches no
// namespace manages none, so OLM's service-account query fails the InstallPlan's check
// (InstallCheckFailed: "no operator group found that is managing this namespace") and the
// plan stays Installing: the CSV is never created. The finding says that, not the
// NoTargetNamespaces the CSV would get if it existed.
func TestPreviewPlanStuckForTheGroup(t *testing.T) {
	og := "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og, namespace: team-d}\n" +
		"spec:\n  selector: {matchLabels: {nothing: matches}}\n"
	repo := files{
		"olmsync.yaml":                    "apps:\n- {name: cluster-scope, path: cluster-scope, clusterScope: true}\n",
		"cluster-scope/namespace.yaml":    namespace("team-d"),
		"cluster-scope/group.yaml":        og,
		"cluster-scope/subscription.yaml": sub("team-d", "etcd", "etcd", "stable", "community-operators", "Automatic"),
	}
	_, rep := checkWith(t, writeTree(t, repo), Options{Catalogs: []CatalogSpec{fixtureCatalog}})
	var s *report.SubscriptionPreview
	for i := range rep.Subscriptions {
		if rep.Subscriptions[i].Namespace == "team-d" {
			s = &rep.Subscriptions[i]
		}
	}
	if s == nil || s.Plan == nil || s.Plan.Phase != "Installing" || s.Plan.InstallCheckFailed != "no operator group found that is managing this namespace" || s.Outcome != nil {
		t.Fatalf("preview %+v: want the plan Installing with OLM's InstallCheckFailed message and no CSV outcome", s)
	}
	next := s.Resolution.Next
	want := "Subscription team-d/etcd: the InstallPlan for " + next + " would stay Installing, its Installed condition False (InstallCheckFailed): " +
		"no operator group found that is managing this namespace; " + next + " would not be created"
	var got []string
	for _, v := range rep.Violations {
		if v.Rule == RuleCSVFails {
			got = append(got, v.Message)
		}
	}
	if len(got) != 1 || got[0] != want {
		t.Errorf("OLM002 findings %q, want only %q", got, want)
	}
}
