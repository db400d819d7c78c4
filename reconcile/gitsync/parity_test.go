package gitsync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/gitsync"
)

// teamRepo is a repository of one app, "team", deployed into ns: the given files under
// team/.
func teamRepo(ns string, files map[string]string) map[string]string {
	out := map[string]string{"olmsync.yaml": fmt.Sprintf("apps:\n- {name: team, path: team, namespace: %s}\n", ns)}
	for k, v := range files {
		out["team/"+k] = v
	}
	return out
}

// TestDependsOn: a Sync waits, applying nothing, until the Syncs it depends on are Ready;
// it goes on when they are (woken by their change); a cycle and a missing dependency are
// said, not waited on silently.
func TestDependsOn(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("deps")
	createNamespace(t, env, ns)
	base := gittest.NewUpstream(t, teamRepo(ns, map[string]string{"base.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\n"}))
	app := gittest.NewUpstream(t, teamRepo(ns, map[string]string{"app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"}))
	baseSrv := gittest.Serve(t, base, gittest.ServerOptions{})
	appSrv := gittest.Serve(t, app, gittest.ServerOptions{})

	b := newSync(t, env, ns, "base", baseSrv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) { s.Suspend = true })
	a := newSync(t, env, ns, "app", appSrv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
		s.DependsOn = []olmsyncv1alpha1.DependencyReference{{Name: "base"}}
		s.Interval = metav1.Duration{Duration: time.Hour}
		s.RetryInterval = &metav1.Duration{Duration: time.Hour} // only base's change can wake it
	})
	got := waitReady(t, env, a, metav1.ConditionFalse, olmsyncv1alpha1.DependencyNotReadyReason)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); msg != fmt.Sprintf("dependency '%s/base' is not ready", ns) {
		t.Errorf("Ready message = %q", msg)
	}
	if object(t, env, configMapGVK, ns, "app") != nil || got.Status.LastAppliedRevision != "" {
		t.Fatal("a Sync whose dependency is not Ready applied its revision")
	}

	// base resumes and becomes Ready: app is woken by that change, not by its retry
	// interval (an hour).
	patchSpec(t, env, b, func(s *olmsyncv1alpha1.SyncSpec) { s.Suspend = false })
	appliedAt(t, env, b, base.Head(t))
	appliedAt(t, env, a, app.Head(t))
	if object(t, env, configMapGVK, ns, "app") == nil {
		t.Error("app's ConfigMap not applied once base was Ready")
	}

	// A cycle: c → d → c.
	c := newSync(t, env, ns, "c", appSrv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
		s.DependsOn = []olmsyncv1alpha1.DependencyReference{{Name: "d"}}
	})
	newSync(t, env, ns, "d", appSrv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
		s.DependsOn = []olmsyncv1alpha1.DependencyReference{{Name: "c", Namespace: ns}}
	})
	got = waitReady(t, env, c, metav1.ConditionFalse, olmsyncv1alpha1.DependencyNotReadyReason)
	want := fmt.Sprintf("dependency cycle: %[1]s/c -> %[1]s/d -> %[1]s/c", ns)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); msg != want {
		t.Errorf("Ready message = %q, want %q", msg, want)
	}

	e := newSync(t, env, ns, "e", appSrv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
		s.DependsOn = []olmsyncv1alpha1.DependencyReference{{Name: "nowhere"}}
	})
	got = waitReady(t, env, e, metav1.ConditionFalse, olmsyncv1alpha1.DependencyNotReadyReason)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); msg != fmt.Sprintf("dependency '%s/nowhere' not found", ns) {
		t.Errorf("Ready message = %q", msg)
	}
}

// TestPostBuildOnCluster: targetNamespace, patches, commonMetadata and postBuild
// (substitute and substituteFrom a ConfigMap and a Secret) shape what is applied; a
// missing variable source fails the build and applies nothing until it exists; no secret
// value reaches the status.
func TestPostBuildOnCluster(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns, target := uniqueNS("postbuild"), uniqueNS("target")
	createNamespace(t, env, ns)
	createNamespace(t, env, target)
	up := gittest.NewUpstream(t, teamRepo(ns, map[string]string{
		"kustomization.yaml": "resources: [cm.yaml]\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: elsewhere\ndata:\n" +
			"  level: ${LEVEL:=info}\n  region: ${REGION}\n  token: ${TOKEN}\n  literal: ${NAME}\n",
	}))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	s := newSync(t, env, ns, "shaped", srv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
		s.TargetNamespace = target
		s.Patches = []olmsyncv1alpha1.Patch{{
			Patch:  `[{"op": "add", "path": "/data/patched", "value": "yes"}]`,
			Target: &olmsyncv1alpha1.Selector{Kind: "ConfigMap", Name: "settings"},
		}}
		s.CommonMetadata = &olmsyncv1alpha1.CommonMetadata{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"owner": "platform"}}
		s.PostBuild = &olmsyncv1alpha1.PostBuild{
			Substitute: map[string]string{"NAME": "from-spec", "REGION": "overridden-by-spec"},
			SubstituteFrom: []olmsyncv1alpha1.SubstituteReference{
				{Kind: "ConfigMap", Name: "vars"},
				{Kind: "Secret", Name: "secret-vars"},
				{Kind: "ConfigMap", Name: "absent", Optional: true},
			},
		}
	})
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.SubstituteFailedReason)
	want := fmt.Sprintf(`postBuild.substituteFrom ConfigMap %s/vars: configmaps "vars" not found; nothing was applied or pruned`, ns)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); msg != want {
		t.Errorf("Ready message = %q, want %q", msg, want)
	}
	if object(t, env, configMapGVK, target, "settings") != nil {
		t.Fatal("applied although a variable source is missing")
	}

	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vars"},
		Data: map[string]string{"REGION": "eu", "TOKEN": "from-configmap"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secret-vars"},
		Data: map[string][]byte{"TOKEN": []byte("s3cr3t-value")}}); err != nil {
		t.Fatal(err)
	}
	got = appliedAt(t, env, s, up.Head(t))
	cm := object(t, env, configMapGVK, target, "settings")
	if cm == nil {
		t.Fatalf("no ConfigMap settings in the target namespace %s", target)
	}
	data := cm.Object["data"].(map[string]any)
	wantData := map[string]any{"level": "info", "region": "overridden-by-spec", "token": "s3cr3t-value", "literal": "from-spec", "patched": "yes"}
	for k, v := range wantData {
		if data[k] != v {
			t.Errorf("data[%s] = %v, want %v", k, data[k], v)
		}
	}
	if cm.GetLabels()["team"] != "a" || cm.GetAnnotations()["owner"] != "platform" {
		t.Errorf("labels %v, annotations %v: common metadata missing", cm.GetLabels(), cm.GetAnnotations())
	}
	if object(t, env, configMapGVK, "elsewhere", "settings") != nil {
		t.Error("the file's namespace was used, not targetNamespace")
	}
	for _, e := range got.Status.Inventory.Entries {
		if strings.Contains(e.ID, "s3cr3t") {
			t.Errorf("inventory entry %s holds a secret value", e.ID)
		}
	}
	for _, c := range got.Status.Conditions {
		if strings.Contains(c.Message, "s3cr3t") {
			t.Errorf("condition %s holds a secret value: %s", c.Type, c.Message)
		}
	}
}

// TestHealthTimeout: objects still on their way when spec.timeout has passed make the Sync
// Ready=False HealthCheckFailed, naming them; without a timeout the Sync waits Unknown.
func TestHealthTimeout(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("timeout")
	createNamespace(t, env, ns)
	// envtest runs no Deployment controller: the Deployment never becomes available.
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n" +
		"  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n"
	up := gittest.NewUpstream(t, teamRepo(ns, map[string]string{"deployment.yaml": deployment}))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	waits := newSync(t, env, ns, "waits", srv.RepoURL(), nil)
	bounded := newSync(t, env, ns, "bounded", srv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
		s.Timeout = &metav1.Duration{Duration: 2 * time.Second}
		s.Apps = []string{"team"}
	})
	got := waitReady(t, env, bounded, metav1.ConditionFalse, olmsyncv1alpha1.HealthCheckFailedReason)
	msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition)
	if !strings.HasPrefix(msg, "health check failed after 2s: timeout waiting for: ") || !strings.Contains(msg, "Deployment") {
		t.Errorf("Ready message = %q", msg)
	}
	got, err := getSync(env, waits)
	if err != nil {
		t.Fatal(err)
	}
	if c := conditions.Get(got, olmsyncv1alpha1.ReadyCondition); c == nil || c.Status != metav1.ConditionUnknown {
		t.Errorf("without a timeout Ready = %+v, want Unknown (still waiting)", c)
	}
}

// TestRetryIntervalOfSpec: spec.retryInterval wins over the reconciler's.
func TestRetryIntervalOfSpec(t *testing.T) {
	r := &gitsync.Reconciler{Options: gitsync.Options{RetryInterval: 7 * time.Second}}
	obj := &olmsyncv1alpha1.Sync{}
	if got := gitsync.RetryIntervalOf(r, obj); got != 7*time.Second {
		t.Errorf("without spec.retryInterval: %s, want the reconciler's 7s", got)
	}
	obj.Spec.RetryInterval = &metav1.Duration{Duration: 3 * time.Minute}
	if got := gitsync.RetryIntervalOf(r, obj); got != 3*time.Minute {
		t.Errorf("with spec.retryInterval 3m: %s", got)
	}
}

// TestUnready is the dependency rule, table-tested over a lookup.
func TestUnready(t *testing.T) {
	sync := func(name string, ready bool, deps ...string) *olmsyncv1alpha1.Sync {
		s := &olmsyncv1alpha1.Sync{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 1}}
		s.Status.ObservedGeneration = 1
		for _, d := range deps {
			s.Spec.DependsOn = append(s.Spec.DependsOn, olmsyncv1alpha1.DependencyReference{Name: d})
		}
		if ready {
			conditions.MarkTrue(s, olmsyncv1alpha1.ReadyCondition, "Succeeded", "ok")
		}
		return s
	}
	tests := []struct {
		name  string
		world []*olmsyncv1alpha1.Sync
		want  string
	}{
		{"ready dependency", []*olmsyncv1alpha1.Sync{sync("a", false, "b"), sync("b", true)}, ""},
		{"not ready", []*olmsyncv1alpha1.Sync{sync("a", false, "b"), sync("b", false)}, "dependency 'ns/b' is not ready"},
		{"missing", []*olmsyncv1alpha1.Sync{sync("a", false, "b")}, "dependency 'ns/b' not found"},
		{"self", []*olmsyncv1alpha1.Sync{sync("a", false, "a")}, "dependency cycle: ns/a -> ns/a"},
		{"long cycle", []*olmsyncv1alpha1.Sync{sync("a", false, "b"), sync("b", true, "c"), sync("c", true, "a")}, "dependency cycle: ns/a -> ns/b -> ns/c -> ns/a"},
		{"a cycle not through a is not a's", []*olmsyncv1alpha1.Sync{sync("a", false, "b"), sync("b", true, "c"), sync("c", true, "b")}, ""},
		{"diamond", []*olmsyncv1alpha1.Sync{sync("a", false, "b", "c"), sync("b", true, "d"), sync("c", true, "d"), sync("d", true)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			byKey := map[types.NamespacedName]*olmsyncv1alpha1.Sync{}
			for _, s := range tt.world {
				byKey[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
			}
			get := func(k types.NamespacedName) (*olmsyncv1alpha1.Sync, error) { return byKey[k], nil }
			got, err := gitsync.Unready(tt.world[0], get)
			if err != nil || got != tt.want {
				t.Errorf("unready = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	// A dependency whose new generation is not reconciled yet is not ready.
	b := sync("b", true)
	b.Generation = 2
	got, _ := gitsync.Unready(sync("a", false, "b"), func(types.NamespacedName) (*olmsyncv1alpha1.Sync, error) { return b, nil })
	if got != "dependency 'ns/b' is not ready: generation 2 not reconciled yet" {
		t.Errorf("stale generation: %q", got)
	}
}

// TestRulesCompiledOnce: the reconciler compiles a set of rules once, not once a Sync
// or a reconcile: two Syncs of two repositories without rules of their own share the
// built-in rules' one compilation.
func TestRulesCompiledOnce(t *testing.T) {
	env := testenv.Get(t)
	m := startManager(t, env, managerOptions{})
	ns := uniqueNS("compiled")
	createNamespace(t, env, ns)
	var syncs []*olmsyncv1alpha1.Sync
	var heads []string
	for _, name := range []string{"one", "two"} {
		up := gittest.NewUpstream(t, teamRepo(ns, map[string]string{name + ".yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"}))
		syncs = append(syncs, newSync(t, env, ns, name, gittest.Serve(t, up, gittest.ServerOptions{}).RepoURL(), nil))
		heads = append(heads, up.Head(t))
	}
	for i, s := range syncs {
		appliedAt(t, env, s, heads[i])
	}
	compiled := m.Syncs.Options.Check.PolicyCompiled
	if compiled == nil {
		t.Fatal("the reconciler keeps no compiled rules")
	}
	if compiled.Misses.Load() != 1 || compiled.Hits.Load() < 1 {
		t.Errorf("the rules were compiled %d times and reused %d times; want once, then reused", compiled.Misses.Load(), compiled.Hits.Load())
	}
}
