package charts

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/olmsync/olmsync/api/crds"
)

func render(t *testing.T, values map[string]any) *Rendered {
	t.Helper()
	r, err := Render(Options{ReleaseName: "olmsync", Namespace: "olmsync-system", Values: values})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// find returns the object of that kind and name, or nil.
func find(r *Rendered, kind, name string) *unstructured.Unstructured {
	for _, o := range r.Objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func kinds(r *Rendered) map[string]int {
	out := map[string]int{}
	for _, o := range r.Objects {
		out[o.GetKind()]++
	}
	return out
}

func container(t *testing.T, r *Rendered) map[string]any {
	t.Helper()
	d := find(r, "Deployment", "olmsync")
	if d == nil {
		t.Fatal("no Deployment olmsync")
	}
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("containers %v", cs)
	}
	return cs[0].(map[string]any)
}

func args(t *testing.T, r *Rendered) []string {
	t.Helper()
	a, _, _ := unstructured.NestedStringSlice(container(t, r), "args")
	return a
}

// The defaults: the controller with a lease, non-root on a read-only root filesystem with
// emptyDirs for its caches, probes on the health port; the CRDs, kept on uninstall; the
// GitOps, apply, OLM (olm.mode auto) and leader-election RBAC; the Services; the
// NetworkPolicy; no PodDisruptionBudget for one replica; in helm's install order.
func TestRenderDefaults(t *testing.T) {
	r := render(t, nil)
	want := map[string]int{
		"CustomResourceDefinition": 7, "ServiceAccount": 1, "ClusterRole": 3, "ClusterRoleBinding": 3,
		"Role": 1, "RoleBinding": 1, "Service": 3, "Deployment": 1, "NetworkPolicy": 1,
	}
	if got := kinds(r); !mapsEqual(got, want) {
		t.Errorf("kinds %v, want %v", got, want)
	}
	for _, name := range []string{"olmsync-gitops", "olmsync-apply", "olmsync-olm"} {
		if find(r, "ClusterRole", name) == nil || find(r, "ClusterRoleBinding", name) == nil {
			t.Errorf("no ClusterRole and ClusterRoleBinding %s", name)
		}
	}
	a := args(t, r)
	for _, want := range []string{"run", "--olm=auto", "--leader-elect=true", "--leader-election-namespace=olmsync-system",
		"--leader-election-lease-duration=15s", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8080",
		"--webhook-bind-address=:9292", "--dashboard-addr=:9400", "--git-cache=/cache/git", "--catalog-cache=/cache/catalogs", "--zap-log-level=info"} {
		if !slices.Contains(a, want) {
			t.Errorf("args %q lack %q", a, want)
		}
	}
	c := container(t, r)
	if ro, _, _ := unstructured.NestedBool(c, "securityContext", "readOnlyRootFilesystem"); !ro {
		t.Error("the root filesystem is writable")
	}
	if esc, found, _ := unstructured.NestedBool(c, "securityContext", "allowPrivilegeEscalation"); !found || esc {
		t.Error("privilege escalation is allowed")
	}
	d := find(r, "Deployment", "olmsync")
	if nonRoot, _, _ := unstructured.NestedBool(d.Object, "spec", "template", "spec", "securityContext", "runAsNonRoot"); !nonRoot {
		t.Error("the pod may run as root")
	}
	if p, _, _ := unstructured.NestedString(c, "livenessProbe", "httpGet", "path"); p != "/healthz" {
		t.Errorf("liveness probe %q", p)
	}
	if p, _, _ := unstructured.NestedString(c, "readinessProbe", "httpGet", "path"); p != "/readyz" {
		t.Errorf("readiness probe %q", p)
	}
	mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
	var paths []string
	for _, m := range mounts {
		paths = append(paths, m.(map[string]any)["mountPath"].(string))
	}
	if !slices.Equal(paths, []string{"/cache", "/tmp"}) {
		t.Errorf("mounts %v, want the emptyDirs /cache and /tmp", paths)
	}
	if img, _, _ := unstructured.NestedString(c, "image"); img != "ghcr.io/olmsync/olmsync:0.1.0" {
		t.Errorf("image %q, want the appVersion's", img)
	}
	for _, o := range r.Objects {
		if o.GetKind() == "CustomResourceDefinition" && o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s is not kept on uninstall", o.GetName())
		}
		if ns := o.GetNamespace(); ns != "" && ns != "olmsync-system" {
			t.Errorf("%s %s in namespace %s", o.GetKind(), o.GetName(), ns)
		}
	}
	// helm's install order: the ServiceAccount, CRDs and RBAC before the Deployment.
	order := map[string]int{}
	for i, o := range r.Objects {
		if _, ok := order[o.GetKind()]; !ok {
			order[o.GetKind()] = i
		}
	}
	if order["ServiceAccount"] > order["Deployment"] || order["CustomResourceDefinition"] > order["Deployment"] || order["ClusterRoleBinding"] > order["Deployment"] {
		t.Errorf("objects not in install order: %v", order)
	}
	if !strings.Contains(r.Notes, "kind: Sync") || !strings.Contains(r.Notes, "namespace: olmsync-system") {
		t.Errorf("NOTES.txt does not tell how to create the first Sync:\n%s", r.Notes)
	}
}

// The CRDs the chart installs are the generated ones, byte for byte (make generate copies
// them; make verify fails when the copy is stale).
func TestCRDsAreTheGenerated(t *testing.T) {
	names, err := CRDFiles()
	if err != nil {
		t.Fatal(err)
	}
	generated, err := fs.Glob(crds.FS(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(generated) {
		t.Fatalf("the chart has %d CRDs, api/crds %d", len(names), len(generated))
	}
	for _, name := range names {
		chart, _ := fs.ReadFile(FS(), name)
		gen, err := fs.ReadFile(crds.FS(), filepath.Base(name))
		if err != nil || !bytes.Equal(chart, gen) {
			t.Errorf("%s differs from api/crds (run make generate)", name)
		}
	}
}

// Non-default values, each changing what it says and nothing it should not.
func TestRenderValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, r *Rendered)
	}{
		{"olm external: no OLM rights", map[string]any{"olm": map[string]any{"mode": "external"}}, func(t *testing.T, r *Rendered) {
			if find(r, "ClusterRole", "olmsync-olm") != nil || find(r, "ClusterRoleBinding", "olmsync-olm") != nil {
				t.Error("the embedded OLM's rights are granted with olm.mode external")
			}
			if !slices.Contains(args(t, r), "--olm=external") {
				t.Error("no --olm=external")
			}
		}},
		{"olm workers", map[string]any{"olm": map[string]any{"concurrent": 8}}, func(t *testing.T, r *Rendered) {
			if !slices.Contains(args(t, r), "--olm-concurrent=8") {
				t.Errorf("args %q, want --olm-concurrent=8", args(t, r))
			}
		}},
		{"olm embedded", map[string]any{"olm": map[string]any{"mode": "embedded"}}, func(t *testing.T, r *Rendered) {
			if find(r, "ClusterRole", "olmsync-olm") == nil {
				t.Error("no OLM rights with olm.mode embedded")
			}
		}},
		{"two replicas", map[string]any{"replicaCount": 2}, func(t *testing.T, r *Rendered) {
			d := find(r, "Deployment", "olmsync")
			if n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); n != 2 {
				t.Errorf("replicas %d", n)
			}
			if find(r, "PodDisruptionBudget", "olmsync") == nil {
				t.Error("no PodDisruptionBudget for two replicas")
			}
			if !slices.Contains(args(t, r), "--leader-elect=true") {
				t.Error("two replicas without a lease")
			}
		}},
		{"lease timings", map[string]any{"leaderElection": map[string]any{"leaseDuration": "30s", "renewDeadline": "20s", "retryPeriod": "5s"}}, func(t *testing.T, r *Rendered) {
			a := args(t, r)
			for _, want := range []string{"--leader-election-lease-duration=30s", "--leader-election-renew-deadline=20s", "--leader-election-retry-period=5s"} {
				if !slices.Contains(a, want) {
					t.Errorf("args lack %s", want)
				}
			}
		}},
		{"a shard", map[string]any{"watchLabelSelector": "sharding.olmsync.dev/key in (shard1)", "crds": map[string]any{"install": false}, "olm": map[string]any{"mode": "external"}}, func(t *testing.T, r *Rendered) {
			if !slices.Contains(args(t, r), "--watch-label-selector=sharding.olmsync.dev/key in (shard1)") {
				t.Errorf("args %q", args(t, r))
			}
			if kinds(r)["CustomResourceDefinition"] != 0 {
				t.Error("CRDs with crds.install false")
			}
		}},
		{"CRDs not kept", map[string]any{"crds": map[string]any{"keep": false}}, func(t *testing.T, r *Rendered) {
			for _, o := range r.Objects {
				if _, kept := o.GetAnnotations()["helm.sh/resource-policy"]; kept {
					t.Errorf("%s %s kept", o.GetKind(), o.GetName())
				}
			}
		}},
		{"cluster-admin for Syncs without a service account", map[string]any{"rbac": map[string]any{"clusterAdmin": true}}, func(t *testing.T, r *Rendered) {
			if find(r, "ClusterRole", "olmsync-apply") != nil {
				t.Error("the apply ClusterRole beside cluster-admin")
			}
			b := find(r, "ClusterRoleBinding", "olmsync-apply")
			if ref, _, _ := unstructured.NestedString(b.Object, "roleRef", "name"); ref != "cluster-admin" {
				t.Errorf("roleRef %q", ref)
			}
		}},
		{"extra apply rules", map[string]any{"rbac": map[string]any{"extraApplyRules": []any{map[string]any{"apiGroups": []any{"hello.olmsync.dev"}, "resources": []any{"greetings"}, "verbs": []any{"get", "create"}}}}}, func(t *testing.T, r *Rendered) {
			rules, _, _ := unstructured.NestedSlice(find(r, "ClusterRole", "olmsync-apply").Object, "rules")
			if len(rules) != 3 || rules[2].(map[string]any)["resources"].([]any)[0] != "greetings" {
				t.Errorf("apply rules %v, want the defaults and the extra one", rules)
			}
		}},
		{"dashboard off", map[string]any{"dashboard": map[string]any{"enabled": false}}, func(t *testing.T, r *Rendered) {
			if find(r, "Service", "olmsync-dashboard") != nil || !slices.Contains(args(t, r), "--dashboard-addr=") {
				t.Errorf("a dashboard with dashboard.enabled false: args %q", args(t, r))
			}
			if rules := fmt.Sprint(find(r, "ClusterRole", "olmsync-gitops").Object["rules"]); strings.Contains(rules, "tokenreviews") || strings.Contains(rules, "replicasets") {
				t.Errorf("the dashboard's rights without the dashboard: %s", rules)
			}
		}},
		{"dashboard with anonymous reads", map[string]any{"dashboard": map[string]any{"anonymousRead": true}}, func(t *testing.T, r *Rendered) {
			if !slices.Contains(args(t, r), "--dashboard-anonymous-read") || find(r, "Service", "olmsync-dashboard") == nil {
				t.Errorf("args %q", args(t, r))
			}
			rules := fmt.Sprint(find(r, "ClusterRole", "olmsync-gitops").Object["rules"])
			for _, want := range []string{"tokenreviews", "subjectaccessreviews", "replicasets", "pods"} {
				if !strings.Contains(rules, want) {
					t.Errorf("the gitops ClusterRole lacks %s: %s", want, rules)
				}
			}
		}},
		{"no RBAC", map[string]any{"rbac": map[string]any{"create": false}}, func(t *testing.T, r *Rendered) {
			k := kinds(r)
			if k["ClusterRole"]+k["ClusterRoleBinding"]+k["Role"]+k["RoleBinding"] != 0 {
				t.Errorf("RBAC with rbac.create false: %v", k)
			}
		}},
		{"image digest", map[string]any{"image": map[string]any{"repository": "r.example/olmsync", "digest": "sha256:" + strings.Repeat("ab", 32)}}, func(t *testing.T, r *Rendered) {
			if img, _, _ := unstructured.NestedString(container(t, r), "image"); img != "r.example/olmsync@sha256:"+strings.Repeat("ab", 32) {
				t.Errorf("image %q", img)
			}
		}},
		{"webhook ingress, service monitor, no network policy", map[string]any{
			"webhook":       map[string]any{"ingress": map[string]any{"enabled": true, "className": "nginx", "hosts": []any{"hooks.example.com"}}},
			"metrics":       map[string]any{"serviceMonitor": map[string]any{"enabled": true}},
			"networkPolicy": map[string]any{"enabled": false},
		}, func(t *testing.T, r *Rendered) {
			ing := find(r, "Ingress", "olmsync-webhook")
			if ing == nil {
				t.Fatal("no Ingress")
			}
			rules, _, _ := unstructured.NestedSlice(ing.Object, "spec", "rules")
			if len(rules) != 1 || rules[0].(map[string]any)["host"] != "hooks.example.com" {
				t.Errorf("rules %v", rules)
			}
			if find(r, "ServiceMonitor", "olmsync") == nil {
				t.Error("no ServiceMonitor")
			}
			if kinds(r)["NetworkPolicy"] != 0 {
				t.Error("a NetworkPolicy with networkPolicy.enabled false")
			}
			if !strings.Contains(r.Notes, "https://hooks.example.com/hooks/olmsync-system/") {
				t.Errorf("NOTES.txt does not give the Ingress's hook URL:\n%s", r.Notes)
			}
		}},
		{"webhook off", map[string]any{"webhook": map[string]any{"enabled": false}}, func(t *testing.T, r *Rendered) {
			if find(r, "Service", "olmsync-webhook") != nil || !slices.Contains(args(t, r), "--webhook-bind-address=0") {
				t.Error("the receiver still served")
			}
		}},
		{"release name with the chart's", nil, func(t *testing.T, _ *Rendered) {
			r, err := Render(Options{ReleaseName: "shard1", Namespace: "olmsync-system"})
			if err != nil {
				t.Fatal(err)
			}
			if find(r, "Deployment", "shard1-olmsync") == nil || find(r, "ClusterRole", "shard1-olmsync-gitops") == nil {
				t.Error("a second release's objects are not named after it")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, render(t, tc.values)) })
	}
}

// values.schema.json refuses what would not work, naming the value.
func TestSchemaRefuses(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"olm": map[string]any{"mode": "sometimes"}}, "/olm/mode"},
		{map[string]any{"olm": map[string]any{"concurrent": 0}}, "/olm/concurrent"},
		{map[string]any{"replicas": 2}, "replicas"},
		{map[string]any{"leaderElection": map[string]any{"leaseDuration": "15"}}, "/leaderElection/leaseDuration"},
		{map[string]any{"image": map[string]any{"digest": "latest"}}, "/image/digest"},
		{map[string]any{"replicaCount": 2, "leaderElection": map[string]any{"enabled": false}}, "needs leaderElection.enabled"},
		{map[string]any{"webhook": map[string]any{"ingress": map[string]any{"enabled": true}}}, "webhook.ingress.hosts"},
	} {
		_, err := Render(Options{ReleaseName: "olmsync", Namespace: "olmsync-system", Values: tc.values})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %v: error %v, want one naming %q", tc.values, err, tc.want)
		}
	}
}

// helm's own linter (the library `helm lint` runs) warns of nothing, with the defaults
// and with every optional object on (its INFO, "icon is recommended", is no warning).
func TestHelmLint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ChartDir)
	if err := os.CopyFS(dir, mustSub(t)); err != nil {
		t.Fatal(err)
	}
	for _, values := range []map[string]any{nil, {
		"replicaCount": 2, "webhook": map[string]any{"ingress": map[string]any{"enabled": true, "hosts": []any{"hooks.example.com"}}},
		"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}},
	}} {
		res := lint.AllWithKubeVersion(dir, values, "olmsync-system", nil)
		for _, m := range res.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint (values %v): %s", values, m)
			}
		}
	}
}

func mustSub(t *testing.T) fs.FS {
	sub, err := fs.Sub(FS(), ChartDir)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
