package install

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/resolve"
)

// strategyCSV is a small CSV: one deployment, a namespaced permission for "etcd-operator" and a
// cluster permission for "default" (never created).
func strategyCSV() *v1alpha1.ClusterServiceVersion {
	c := &v1alpha1.ClusterServiceVersion{}
	c.Namespace, c.Name, c.UID = "operators", "etcd.v0.9.4", "uid-etcd"
	c.Annotations = map[string]string{operatorsv1.OperatorGroupTargetsAnnotationKey: "operators"}
	spec := &c.Spec.InstallStrategy
	spec.StrategyName = v1alpha1.InstallStrategyNameDeployment
	spec.StrategySpec.Permissions = []v1alpha1.StrategyDeploymentPermissions{{
		ServiceAccountName: "etcd-operator",
		Rules:              []rbacv1.PolicyRule{{APIGroups: []string{"etcd.database.coreos.com"}, Resources: []string{"etcdclusters"}, Verbs: []string{"*"}}},
	}}
	spec.StrategySpec.ClusterPermissions = []v1alpha1.StrategyDeploymentPermissions{{
		ServiceAccountName: "default",
		Rules:              []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}},
	}}
	spec.StrategySpec.DeploymentSpecs = []v1alpha1.StrategyDeploymentSpec{{
		Name:  "etcd-operator",
		Label: map[string]string{"name": "etcd-operator"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "etcd-operator"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": "etcd-operator"}, Annotations: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "etcd-operator", Image: "quay.io/coreos/etcd-operator@sha256:c0301e4686c3ed4206e370b42de5a3bd2229b9fb4906cf85f3f30650424abec2",
					Env: []corev1.EnvVar{{Name: OperatorConditionNameEnv, Value: "stale"}},
				}}},
			},
		},
	}}
	return c
}

// TestPermissionsForMatchesInstallPlanSteps: the CSV controller writes the very RBAC objects an
// InstallPlan for the CSV creates (names, labels, rules, subjects), with the CSV's UID in the
// owner references, so neither rewrites what the other made.
func TestPermissionsForMatchesInstallPlanSteps(t *testing.T) {
	c := strategyCSV()
	steps, err := resolve.BundleSteps(c.Namespace, resolve.Bundle{Name: c.Name, Content: &catalog.Bundle{Name: c.Name, CSV: c}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := PermissionsFor(c)
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string][]string{}
	for _, s := range steps {
		if s.Resource.Kind != v1alpha1.ClusterServiceVersionKind {
			byKind[s.Resource.Kind] = append(byKind[s.Resource.Kind], s.Resource.Name)
		}
	}
	names := func(objs ...metav1.Object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.GetName())
		}
		return out
	}
	got := map[string][]string{
		"ServiceAccount":     names(&p.ServiceAccounts[0]),
		"Role":               names(&p.Roles[0]),
		"RoleBinding":        names(&p.RoleBindings[0]),
		"ClusterRole":        names(&p.ClusterRoles[0]),
		"ClusterRoleBinding": names(&p.ClusterRoleBindings[0]),
	}
	if diff := cmp.Diff(byKind, got); diff != "" {
		t.Errorf("objects (-installplan +csv controller):\n%s", diff)
	}
	if len(p.ServiceAccounts) != 1 || p.ServiceAccounts[0].Name != "etcd-operator" {
		t.Errorf("service accounts %v, want only etcd-operator (default is never created)", names(&p.ServiceAccounts[0]))
	}
	role := p.Roles[0]
	if diff := cmp.Diff(c.Spec.InstallStrategy.StrategySpec.Permissions[0].Rules, role.Rules); diff != "" {
		t.Errorf("role rules (-want +got):\n%s", diff)
	}
	if role.OwnerReferences[0].UID != c.UID {
		t.Errorf("role owner %+v, want the csv's uid", role.OwnerReferences)
	}
	for k, v := range OwnerLabels(c) {
		if role.Labels[k] != v {
			t.Errorf("role label %s=%q, want %q", k, role.Labels[k], v)
		}
	}
	if got, want := role.Labels[PermissionsHashLabel], resolve.PolicyRulesHash(role.Rules); got != want || got == "" {
		t.Errorf("role %s: olm.permissions.hash %q, want the hash of its rules %q", role.Name, got, want)
	}
	if b := p.RoleBindings[0]; b.Labels[PermissionsHashLabel] != resolve.BindingHash(b.RoleRef, b.Subjects) {
		t.Errorf("role binding %s: olm.permissions.hash %q, want the hash of its roleRef and subjects", b.Name, b.Labels[PermissionsHashLabel])
	}
	want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: "operators"}}
	if diff := cmp.Diff(want, p.ClusterRoleBindings[0].Subjects); diff != "" {
		t.Errorf("cluster role binding subjects (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *v1alpha1.ClusterServiceVersion)
		want   string
	}{
		{name: "valid"},
		{
			name:   "another strategy",
			change: func(c *v1alpha1.ClusterServiceVersion) { c.Spec.InstallStrategy.StrategyName = "helm" },
			want:   `unsupported strategy "helm": only "deployment" is known`,
		},
		{
			name: "a deployment without a name",
			change: func(c *v1alpha1.ClusterServiceVersion) {
				c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Name = ""
			},
			want: "deployments[0] has no name",
		},
		{
			name: "a deployment twice",
			change: func(c *v1alpha1.ClusterServiceVersion) {
				s := &c.Spec.InstallStrategy.StrategySpec
				s.DeploymentSpecs = append(s.DeploymentSpecs, s.DeploymentSpecs[0])
			},
			want: `deployment "etcd-operator" is listed twice`,
		},
		{
			name: "a permission without a service account",
			change: func(c *v1alpha1.ClusterServiceVersion) {
				c.Spec.InstallStrategy.StrategySpec.ClusterPermissions[0].ServiceAccountName = ""
			},
			want: "a permissions entry has no serviceAccountName",
		},
		{
			name: "a webhook served by the strategy's deployment",
			change: func(c *v1alpha1.ClusterServiceVersion) {
				c.Spec.WebhookDefinitions = []v1alpha1.WebhookDescription{{GenerateName: "vetcd.kb.io", DeploymentName: "etcd-operator"}}
				c.Spec.APIServiceDefinitions.Owned = []v1alpha1.APIServiceDescription{{Group: "etcd.example.com", Version: "v1", DeploymentName: "etcd-operator"}}
			},
		},
		{
			name: "a webhook naming a deployment the strategy does not have",
			change: func(c *v1alpha1.ClusterServiceVersion) {
				c.Spec.WebhookDefinitions = []v1alpha1.WebhookDescription{{GenerateName: "vetcd.kb.io", DeploymentName: "etcd-webhook"}}
			},
			want: `webhook vetcd.kb.io names deployment "etcd-webhook", which the install strategy does not have`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := strategyCSV()
			if tt.change != nil {
				tt.change(c)
			}
			got := ""
			if err := Validate(c); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDeployments: the strategy's Deployment as OLM writes it.
func TestDeployments(t *testing.T) {
	c := strategyCSV()
	ds, err := Deployments(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Fatalf("%d deployments", len(ds))
	}
	d := ds[0]
	if d.Namespace != "operators" || d.Labels["name"] != "etcd-operator" || d.Labels[groups.OwnerLabel] != c.Name || d.Labels[DeploymentSpecHashLabel] == "" {
		t.Errorf("metadata %+v", d.ObjectMeta)
	}
	if got := d.Spec.Template.Annotations; got["a"] != "b" || got[operatorsv1.OperatorGroupTargetsAnnotationKey] != "operators" {
		t.Errorf("pod template annotations %v: want the template's and the csv's", got)
	}
	if diff := cmp.Diff([]corev1.EnvVar{{Name: OperatorConditionNameEnv, Value: c.Name}}, d.Spec.Template.Spec.Containers[0].Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if *d.Spec.RevisionHistoryLimit != 1 {
		t.Errorf("revisionHistoryLimit %d", *d.Spec.RevisionHistoryLimit)
	}
	// The strategy in the CSV is not modified.
	if env := c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Env[0].Value; env != "stale" {
		t.Errorf("the csv's container env was changed to %q", env)
	}
}

func TestCheck(t *testing.T) {
	available := func(d *appsv1.Deployment) {
		d.Generation, d.Status.ObservedGeneration = 2, 2
		d.Status.Replicas, d.Status.UpdatedReplicas = 1, 1
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}
	}
	tests := []struct {
		name   string
		change func(d *appsv1.Deployment)
		none   bool
		want   *StrategyError
	}{
		{name: "installed and available", change: available},
		{name: "missing", none: true, want: &StrategyError{ReasonComponentMissing, "missing deployment with name=etcd-operator"}},
		{
			name:   "generation not observed",
			change: func(d *appsv1.Deployment) { available(d); d.Status.ObservedGeneration = 1 },
			want:   &StrategyError{ReasonWaiting, `waiting for deployment etcd-operator to become ready: waiting for spec update of deployment "etcd-operator" to be observed...`},
		},
		{
			name: "outdated replicas",
			change: func(d *appsv1.Deployment) {
				available(d)
				d.Status.Replicas = 3
			},
			want: &StrategyError{ReasonWaiting, `waiting for deployment etcd-operator to become ready: deployment "etcd-operator" waiting for 2 outdated replica(s) to be terminated`},
		},
		{
			name:   "not available",
			change: func(d *appsv1.Deployment) { available(d); d.Status.Conditions = nil },
			want:   &StrategyError{ReasonWaiting, `waiting for deployment etcd-operator to become ready: deployment "etcd-operator" not available: missing condition "Available"`},
		},
		{
			name: "past its progress deadline",
			change: func(d *appsv1.Deployment) {
				available(d)
				d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Reason: "ProgressDeadlineExceeded"})
			},
			want: &StrategyError{ReasonTimeout, `deployment etcd-operator not ready before timeout: deployment "etcd-operator" exceeded its progress deadline`},
		},
		{
			name: "an annotation of the csv missing on the pods",
			change: func(d *appsv1.Deployment) {
				available(d)
				delete(d.Spec.Template.Annotations, operatorsv1.OperatorGroupTargetsAnnotationKey)
			},
			want: &StrategyError{ReasonAnnotationsMissing, "annotations on deployment does not contain expected key: olm.targetNamespaces"},
		},
		{
			name: "written from another spec",
			change: func(d *appsv1.Deployment) {
				available(d)
				d.Labels[DeploymentSpecHashLabel] = "old"
			},
			want: &StrategyError{ReasonDeploymentUpdated, "deployment changed old hash=old, new hash=" + mustHash(t)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := strategyCSV()
			var existing []appsv1.Deployment
			if !tt.none {
				ds, err := Deployments(c, nil)
				if err != nil {
					t.Fatal(err)
				}
				tt.change(&ds[0])
				existing = ds
			}
			if diff := cmp.Diff(tt.want, Check(c, existing, nil)); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

func mustHash(t *testing.T) string {
	t.Helper()
	ds, err := Deployments(strategyCSV(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ds[0].Labels[DeploymentSpecHashLabel]
}

// TestDeploymentSpecHashIsStable: the hash depends on the spec's content only, so a restart does
// not rewrite every Deployment.
func TestDeploymentSpecHashIsStable(t *testing.T) {
	a, b := mustHash(t), mustHash(t)
	if a != b {
		t.Fatalf("hash differs between runs: %s, %s", a, b)
	}
	c := strategyCSV()
	c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Image = "other"
	ds, err := Deployments(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ds[0].Labels[DeploymentSpecHashLabel] == a {
		t.Error("a changed image keeps the hash")
	}
	raw, _ := json.Marshal(ds[0].Spec)
	if len(raw) == 0 {
		t.Fatal("empty spec")
	}
}

// TestPermissionsForIsWhatThePlanCreates: PermissionsFor builds its objects without going
// through steps; they are, field for field, the objects of the plan's steps for the CSV
// (decoded, the CSV's UID in the owner references and olm.managed added, as the plan's
// executor writes them), for a CSV with one service account per kind of permission and for
// one whose two service accounts each have both. And they share nothing with the CSV.
func TestPermissionsForIsWhatThePlanCreates(t *testing.T) {
	twoAccounts := strategyCSV()
	spec := &twoAccounts.Spec.InstallStrategy.StrategySpec
	for _, sa := range []string{"second", "etcd-operator"} {
		spec.Permissions = append(spec.Permissions, v1alpha1.StrategyDeploymentPermissions{
			ServiceAccountName: sa,
			Rules:              []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
		})
		spec.ClusterPermissions = append(spec.ClusterPermissions, v1alpha1.StrategyDeploymentPermissions{
			ServiceAccountName: sa,
			Rules:              []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get"}}},
		})
	}
	for name, c := range map[string]*v1alpha1.ClusterServiceVersion{"one account each": strategyCSV(), "two accounts": twoAccounts} {
		t.Run(name, func(t *testing.T) {
			want := planPermissions(t, c)
			got, err := PermissionsFor(c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("objects (-installplan's steps +PermissionsFor):\n%s", diff)
			}
			before := c.DeepCopy()
			got.Roles[0].Rules[0].Verbs[0] = "changed"
			got.ClusterRoles[0].Rules[0].Resources[0] = "changed"
			got.ServiceAccounts[0].OwnerReferences[0].Name = "changed"
			if diff := cmp.Diff(before, c); diff != "" {
				t.Errorf("changing PermissionsFor's objects changed the CSV (-before +after):\n%s", diff)
			}
		})
	}
}

// planPermissions decodes the RBAC steps of a plan for c as its executor writes them: the
// CSV's UID in the owner references, olm.managed=true.
func planPermissions(t *testing.T, c *v1alpha1.ClusterServiceVersion) Permissions {
	t.Helper()
	steps, err := resolve.BundleSteps(c.Namespace, resolve.Bundle{Name: c.Name, Replaces: c.Spec.Replaces, Content: &catalog.Bundle{Name: c.Name, CSV: c}})
	if err != nil {
		t.Fatal(err)
	}
	var out Permissions
	for _, s := range steps {
		var err error
		switch s.Resource.Kind {
		case "ServiceAccount":
			err = decodeStep(s, &out.ServiceAccounts, c)
		case "Role":
			err = decodeStep(s, &out.Roles, c)
		case "RoleBinding":
			err = decodeStep(s, &out.RoleBindings, c)
		case "ClusterRole":
			err = decodeStep(s, &out.ClusterRoles, c)
		case "ClusterRoleBinding":
			err = decodeStep(s, &out.ClusterRoleBindings, c)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func decodeStep[T any, P object[T]](s v1alpha1.Step, list *[]T, c *v1alpha1.ClusterServiceVersion) error {
	var obj T
	if err := json.Unmarshal([]byte(s.Resource.Manifest), &obj); err != nil {
		return err
	}
	p := P(&obj)
	refs := p.GetOwnerReferences()
	for i := range refs {
		if refs[i].Kind == v1alpha1.ClusterServiceVersionKind && refs[i].Name == c.Name {
			refs[i].UID = c.UID
		}
	}
	labels := p.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[groups.ManagedLabel] = groups.ManagedLabelValue
	p.SetLabels(labels)
	*list = append(*list, obj)
	return nil
}

// BenchmarkPermissionsFor: what the CSV controller spends on a CSV's permissions on every
// sync, for a CSV of one namespaced and one cluster permission.
func BenchmarkPermissionsFor(b *testing.B) {
	c := strategyCSV()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PermissionsFor(c); err != nil {
			b.Fatal(err)
		}
	}
}
