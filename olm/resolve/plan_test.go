package resolve_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
)

// withContent gives a bundle its CSV and objects, as a bundle directory or an FBC with
// olm.bundle.object properties does.
func (p pkgB) withContent(bundle string, objects ...catalog.Object) pkgB {
	b := p.Bundle(bundle)
	csv := &v1alpha1.ClusterServiceVersion{}
	csv.APIVersion, csv.Kind = "operators.coreos.com/v1alpha1", "ClusterServiceVersion"
	csv.Name = bundle
	csv.Annotations = map[string]string{"capabilities": "Basic Install"}
	csv.Spec.Version = v1alpha1.OperatorVersion(versionOf(bundle))
	csv.Spec.Replaces = "something-from-the-catalog"
	csv.Spec.InstallStrategy.StrategyName = "deployment"
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"etcd.database.coreos.com"}, Resources: []string{"etcdclusters"}, Verbs: []string{"*"}}}
	csv.Spec.InstallStrategy.StrategySpec.Permissions = []v1alpha1.StrategyDeploymentPermissions{
		{ServiceAccountName: "etcd-operator", Rules: rules},
		{ServiceAccountName: "default", Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}},
	}
	csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions = []v1alpha1.StrategyDeploymentPermissions{
		{ServiceAccountName: "etcd-operator", Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}}},
	}
	b.CSV = csv
	b.Objects = objects
	b.Properties = append(b.Properties,
		catalog.Property{Type: catalog.PropertyBundleObject, Value: json.RawMessage(`{"data":"e30="}`)},
		prop(catalog.PropertyCSVMetadata, map[string]string{"displayName": "etcd"}))
	return p
}

func object(apiVersion, kind, name string) catalog.Object {
	data, _ := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}})
	return catalog.Object{APIVersion: apiVersion, Kind: kind, Name: name, JSON: data}
}

func TestPlan(t *testing.T) {
	etcd := pkg("etcd", "alpha", ch("alpha", e("etcdoperator.v0.9.0"), e("etcdoperator.v0.9.2", replaces("etcdoperator.v0.9.0")))).
		withContent("etcdoperator.v0.9.2",
			object("v1", "Secret", "etcd-secret"),
			object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "etcdclusters.etcd.database.coreos.com"),
			object("v1", "ConfigMap", "etcd-config")).
		requires("etcdoperator.v0.9.2", apiX)
	dep := provider("x", "1.0.0") // known by image only: a bundle lookup
	catalogs := []resolve.Catalog{cat("community", "olm", etcd, dep)}
	res := resolveNS(t, catalogs, ns(subs(sub("etcd", "etcd", "alpha", "community", "olm").at("etcdoperator.v0.9.0").manual()), installed(etcd, "etcdoperator.v0.9.0")))
	if r := res.Subscriptions[0].Resolution; r.Next != "etcdoperator.v0.9.2" {
		t.Fatalf("resolution = %+v", r)
	}
	plan, err := resolve.NewPlan(res)
	if err != nil {
		t.Fatal(err)
	}

	type stepKey struct{ Kind, Group, Version, Name, Resolving string }
	var got []stepKey
	for _, s := range plan.Steps {
		got = append(got, stepKey{s.Resource.Kind, s.Resource.Group, s.Resource.Version, s.Resource.Name, s.Resolving})
		if s.Status != v1alpha1.StepStatusUnknown || s.Resource.CatalogSource != "community" || s.Resource.CatalogSourceNamespace != "olm" {
			t.Errorf("step %s %s: status %q, source %s/%s", s.Resource.Kind, s.Resource.Name, s.Status, s.Resource.CatalogSourceNamespace, s.Resource.CatalogSource)
		}
	}
	// CSV, CRD, then the bundle's other objects, then per service account (in the order the
	// strategy names them) its ServiceAccount (not "default"), Roles, RoleBindings,
	// ClusterRoles and ClusterRoleBindings; then the generated Subscription.
	csv := "etcdoperator.v0.9.2"
	roleName, clusterRoleName, defaultRoleName := plan.Steps[5].Resource.Name, plan.Steps[7].Resource.Name, plan.Steps[9].Resource.Name
	rbac := "rbac.authorization.k8s.io"
	want := []stepKey{
		{"ClusterServiceVersion", "operators.coreos.com", "v1alpha1", csv, csv},
		{"CustomResourceDefinition", "apiextensions.k8s.io", "v1", "etcdclusters.etcd.database.coreos.com", csv},
		{"BundleSecret", "", "v1", "etcd-secret", csv},
		{"ConfigMap", "", "v1", "etcd-config", csv},
		{"ServiceAccount", "", "v1", "etcd-operator", csv},
		{"Role", rbac, "v1", roleName, csv},
		{"RoleBinding", rbac, "v1", roleName, csv},
		{"ClusterRole", rbac, "v1", clusterRoleName, csv},
		{"ClusterRoleBinding", rbac, "v1", clusterRoleName, csv},
		{"Role", rbac, "v1", defaultRoleName, csv},
		{"RoleBinding", rbac, "v1", defaultRoleName, csv},
		{"Subscription", "operators.coreos.com", "v1alpha1", "x-stable-community-olm", "x.v1.0.0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	for _, n := range []string{roleName, defaultRoleName} {
		if !strings.HasPrefix(n, csv+"-etcd-operator-") && !strings.HasPrefix(n, csv+"-default-") || len(n) > 63 {
			t.Errorf("role name %q is not <csv>-<sa>-<hash> within 63 characters", n)
		}
	}
	if !strings.HasPrefix(clusterRoleName, csv+"-") || clusterRoleName == roleName {
		t.Errorf("cluster role name %q", clusterRoleName)
	}

	// Step manifests are compact JSON without OLM's trailing newline (docs/olm.md, "Step
	// manifests"): the content is the same.
	for i, st := range plan.Steps {
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(st.Resource.Manifest)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if compact.String() != st.Resource.Manifest {
			t.Errorf("step %d's manifest is not compact JSON: %q", i, st.Resource.Manifest)
		}
	}

	// The CSV: in the namespace, replacing the installed CSV, with the bundle's properties
	// (olm.bundle.object and olm.csv.metadata stripped) in the properties annotation.
	var gotCSV v1alpha1.ClusterServiceVersion
	if err := json.Unmarshal([]byte(plan.Steps[0].Resource.Manifest), &gotCSV); err != nil {
		t.Fatal(err)
	}
	wantAnno := `{"properties":[{"type":"olm.package","value":{"packageName":"etcd","version":"0.9.2"}},{"type":"olm.gvk.required","value":{"group":"example.com","kind":"Widget","version":"v1"}}]}`
	if gotCSV.Namespace != "ns" || gotCSV.Spec.Replaces != "etcdoperator.v0.9.0" || gotCSV.Annotations[resolve.PropertiesAnnotation] != wantAnno || gotCSV.Annotations["capabilities"] != "Basic Install" {
		t.Errorf("CSV step: namespace %q, replaces %q, annotations %v", gotCSV.Namespace, gotCSV.Spec.Replaces, gotCSV.Annotations)
	}
	if etcd.Bundle(csv).CSV.Spec.Replaces != "something-from-the-catalog" || etcd.Bundle(csv).CSV.Namespace != "" {
		t.Error("NewPlan changed the catalog's CSV")
	}

	// RBAC: owner labels, the permission hash, a non-blocking owner reference to the CSV.
	var role rbacv1.Role
	if err := json.Unmarshal([]byte(plan.Steps[5].Resource.Manifest), &role); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"olm.owner": csv, "olm.owner.namespace": "ns", "olm.owner.kind": "ClusterServiceVersion", "olm.permissions.hash": resolve.PolicyRulesHash(role.Rules)}
	if diff := cmp.Diff(wantLabels, role.Labels); diff != "" {
		t.Errorf("role labels (-want +got):\n%s", diff)
	}
	if len(role.OwnerReferences) != 1 || role.OwnerReferences[0].Name != csv || *role.OwnerReferences[0].BlockOwnerDeletion || role.Namespace != "ns" {
		t.Errorf("role owner %+v, namespace %q", role.OwnerReferences, role.Namespace)
	}
	var binding rbacv1.ClusterRoleBinding
	if err := json.Unmarshal([]byte(plan.Steps[8].Resource.Manifest), &binding); err != nil {
		t.Fatal(err)
	}
	if binding.RoleRef.Name != clusterRoleName || binding.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: "etcd-operator", Namespace: "ns"}) {
		t.Errorf("cluster role binding %+v", binding)
	}

	// The dependency is known only by image: a bundle lookup, with OLM's conditions.
	wantLookup := []v1alpha1.BundleLookup{{
		Path: "quay.io/example/x.v1.0.0", Identifier: "x.v1.0.0",
		CatalogSourceRef: &corev1.ObjectReference{Namespace: "olm", Name: "community"},
		Conditions: []v1alpha1.BundleLookupCondition{
			{Type: "BundleLookupNotPersisted", Status: corev1.ConditionTrue, Reason: "BundleNotUnpacked", Message: "bundle contents have not yet been persisted to installplan status"},
			{Type: "BundleLookupPending", Status: corev1.ConditionTrue, Reason: "JobNotStarted", Message: "unpack job not yet started"},
		},
		Properties: `{"properties":[{"type":"olm.package","value":{"packageName":"x","version":"1.0.0"}},{"type":"olm.gvk","value":{"group":"example.com","kind":"Widget","version":"v1"}}]}`,
	}}
	if diff := cmp.Diff(wantLookup, plan.BundleLookups); diff != "" {
		t.Errorf("bundle lookups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{csv, "x.v1.0.0"}, plan.CSVNames); diff != "" {
		t.Errorf("CSV names (-want +got):\n%s", diff)
	}
	if plan.Approval != v1alpha1.ApprovalManual || !cmp.Equal(plan.CatalogSources, []string{"community"}) {
		t.Errorf("approval %s, catalog sources %v", plan.Approval, plan.CatalogSources)
	}

	// The same permission gives the same name every time, and another gives another.
	again, err := resolve.NewPlan(res)
	if err != nil {
		t.Fatal(err)
	}
	if again.Steps[5].Resource.Name != roleName {
		t.Errorf("role name changed between two plans: %s, %s", roleName, again.Steps[5].Resource.Name)
	}
}

func TestNoPlanWhenNothingToInstall(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0")))
	res := resolveNS(t, []resolve.Catalog{cat("c", "olm", a)}, ns(subs(sub("a", "a", "stable", "c", "olm").at("a.v1.0.0")), installed(a, "a.v1.0.0")))
	plan, err := resolve.NewPlan(res)
	if err != nil || plan != nil {
		t.Errorf("NewPlan = %+v, %v; want nil", plan, err)
	}
	if _, err := resolve.BundleSteps("ns", resolve.Bundle{Name: "a.v1.0.0", Content: a.Bundle("a.v1.0.0")}); err == nil {
		t.Error("BundleSteps made steps for a bundle without a CSV")
	}
}

func TestOrderSteps(t *testing.T) {
	step := func(kind, name string) v1alpha1.Step {
		return v1alpha1.Step{Resource: v1alpha1.StepResource{Kind: kind, Name: name}}
	}
	in := []v1alpha1.Step{step("ServiceAccount", "sa"), step("CustomResourceDefinition", "b"), step("ClusterServiceVersion", "x"),
		step("Subscription", "s"), step("CustomResourceDefinition", "a"), step("ClusterServiceVersion", "y")}
	want := []v1alpha1.Step{in[2], in[5], in[1], in[4], in[0], in[3]}
	if diff := cmp.Diff(want, resolve.OrderSteps(in)); diff != "" {
		t.Errorf("OrderSteps (-want +got):\n%s", diff)
	}
}
