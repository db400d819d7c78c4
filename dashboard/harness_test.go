package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/receiver"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Run(m))
}

// scenario is `olmsync run` with the dashboard on, against envtest, syncing a repository
// served over git's smart HTTP on loopback with three apps:
//
//   - cluster-scope: the namespaces, their OperatorGroups, a ConfigMap catalog of widget
//     1.0.0 and 1.1.0 and its CatalogSource — Synced and Healthy;
//   - team: a Manual Subscription to widget starting at 1.0.0 — its InstallPlan waits for
//     approval (WaitingForApproval);
//   - broken: a Subscription to a package no catalog has (Degraded, ResolutionFailed) and
//     a Namespace outside the cluster-scope app (placement rule OP011).
//
// The Sync is in audit mode, so that the violation is reported and everything applied.
type scenario struct {
	env *testenv.Env
	// ns is the team's namespace (and the catalog's), nsb the broken app's.
	ns, nsb string
	sync    *olmsyncv1alpha1.Sync
	up      *gittest.Upstream
	// url is the dashboard's base URL.
	url string
	// viewer's token may read Syncs and OLM's kinds; approver's may also patch Syncs
	// and update InstallPlans.
	viewer, approver string
	// log holds what the manager logged.
	log *logSink
}

var counter atomic.Int64

// widgetBundles are the catalog's widget versions.
var widgetBundles = []olmtest.Bundle{
	{Package: "widget", Version: "1.0.0"},
	{Package: "widget", Version: "1.1.0", Replaces: "widget.v1.0.0"},
}

func (sc *scenario) files(t testing.TB) map[string]string {
	catalog, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cat", "namespace": sc.ns},
		"data":     olmtest.ConfigMapData(t, widgetBundles),
	})
	if err != nil {
		t.Fatal(err)
	}
	ns, nsb := sc.ns, sc.nsb
	return map[string]string{
		"olmsync.yaml": fmt.Sprintf(`apps:
- {name: cluster-scope, path: cluster-scope}
- {name: team, path: team, namespace: %[1]s}
- {name: broken, path: broken, namespace: %[2]s}
policy:
  marketplaceNamespace: %[1]s
  operatorGroups: []
`, ns, nsb),
		"cluster-scope/namespaces.yaml":     fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns, nsb),
		"cluster-scope/operatorgroups.yaml": fmt.Sprintf("apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  namespace: %[1]s\nspec:\n  targetNamespaces: [%[1]s]\n---\napiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  namespace: %[2]s\nspec:\n  targetNamespaces: [%[2]s]\n", ns, nsb),
		"cluster-scope/catalog.yaml":        string(catalog),
		"cluster-scope/catalogsource.yaml":  fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: cat, namespace: %s}\nspec: {sourceType: configmap, configMap: cat, displayName: cat}\n", ns),
		"team/subscription.yaml":            fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: widget}\nspec: {name: widget, channel: stable, source: cat, sourceNamespace: %s, installPlanApproval: Manual, startingCSV: widget.v1.0.0}\n", ns),
		"broken/subscription.yaml":          fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: ghost}\nspec: {name: ghost, channel: stable, source: cat, sourceNamespace: %s}\n", ns),
		"broken/extra-namespace.yaml":       fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s-extra\n", nsb),
	}
}

// newScenario starts the scenario and waits until the Sync shows its three apps as
// described, the InstallPlan waiting for approval.
func newScenario(t *testing.T, anonymousRead bool) *scenario {
	t.Helper()
	env := testenv.Get(t)
	n := counter.Add(1)
	stamp := time.Now().UnixNano() % 100000
	sc := &scenario{env: env, ns: fmt.Sprintf("dash-%d-%d", stamp, n), nsb: fmt.Sprintf("dash-%d-%d-b", stamp, n), log: &logSink{}}
	sc.up = gittest.NewUpstream(t, sc.files(t))
	srv := gittest.Serve(t, sc.up, gittest.ServerOptions{})
	addr := testenv.FreeAddr(t)
	sc.url = "http://" + addr
	// The catalog's namespace is the global one: the broken app's Subscription sees it,
	// and fails because the package is not there.
	sc.startManager(t, addr, sc.ns, anonymousRead)
	olmtest.EnsureNamespace(t, env, "olmsync-dash")
	sc.sync = &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: "olmsync-dash", Name: sc.ns},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: srv.RepoURL(), Interval: metav1.Duration{Duration: time.Second}},
			Prune:    true,
			Interval: metav1.Duration{Duration: time.Minute},
			Policy:   olmsyncv1alpha1.PolicySpec{Mode: olmsyncv1alpha1.PolicyModeAudit},
		},
	}
	if err := env.Client.Create(context.Background(), sc.sync); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.removeSync(t) })
	ctx, cancel := context.WithCancel(context.Background())
	kubelet := make(chan struct{})
	go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, sc.ns); close(kubelet) }()
	t.Cleanup(func() { cancel(); <-kubelet })
	sc.viewer = sc.token(t, "viewer", false)
	sc.approver = sc.token(t, "approver", true)
	sc.waitApps(t, map[string]string{"cluster-scope": "Synced/Healthy", "team": "Synced/WaitingForApproval", "broken": "Synced/Degraded"})
	return sc
}

// startManager runs reconcile.NewManager as `olmsync run --dashboard-addr` does, with
// intervals short enough for a test, until the test ends.
func (sc *scenario) startManager(t *testing.T, addr, globalCatalogs string, anonymousRead bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := reconcile.NewManager(ctx, rest.CopyConfig(sc.env.Config), reconcile.Options{
		OLM:         olm.ModeEmbedded,
		OLMOptions:  olm.Options{RetryInterval: time.Second, GlobalCatalogNamespace: globalCatalogs},
		MetricsAddr: "0", ProbeAddr: "0", WebhookAddr: "0",
		Webhook: receiver.Options{RatePerMinute: -1},
		Logger:  logr.New(sc.log),
		Sync: gitsync.Options{CacheDir: t.TempDir(), RetryInterval: time.Second, HealthPollInterval: 300 * time.Millisecond,
			CRDTimeout: 20 * time.Second},
		Dashboard: reconcile.DashboardOptions{Addr: addr, AnonymousRead: anonymousRead},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		olmtest.CheckStopped(t, "manager", <-done)
	})
	olmtest.Eventually(t, "the dashboard answers", func() error {
		resp, err := http.Get(sc.url + "/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
}

// removeSync deletes the Sync and waits until its finalizer ran.
func (sc *scenario) removeSync(t *testing.T) {
	ctx := context.Background()
	if err := sc.env.Client.Delete(ctx, sc.sync.DeepCopy()); client.IgnoreNotFound(err) != nil {
		t.Errorf("delete Sync: %v", err)
		return
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := sc.env.Client.Get(ctx, client.ObjectKeyFromObject(sc.sync), &olmsyncv1alpha1.Sync{}); client.IgnoreNotFound(err) == nil && err != nil {
			return
		}
	}
	got := &olmsyncv1alpha1.Sync{}
	if sc.env.Client.Get(ctx, client.ObjectKeyFromObject(sc.sync), got) == nil {
		got.Finalizers = nil
		_ = sc.env.Client.Update(ctx, got)
	}
}

// token makes a ServiceAccount in the team's namespace with the rights of a viewer (get,
// list, watch on Syncs and OLM's kinds) or an approver (also patch Syncs, update
// InstallPlans), and mints a token for it with the TokenRequest API.
func (sc *scenario) token(t *testing.T, name string, approver bool) string {
	t.Helper()
	ctx := context.Background()
	c := sc.env.Client
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sc.ns, Name: name}}
	olmtest.EnsureNamespace(t, sc.env, sc.ns)
	if err := c.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{olmsyncv1alpha1.GroupName}, Resources: []string{"syncs"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"subscriptions", "installplans", "clusterserviceversions", "operatorgroups"}, Verbs: []string{"get", "list", "watch"}},
	}
	if approver {
		rules = append(rules,
			rbacv1.PolicyRule{APIGroups: []string{olmsyncv1alpha1.GroupName}, Resources: []string{"syncs"}, Verbs: []string{"patch"}},
			rbacv1.PolicyRule{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"installplans"}, Verbs: []string{"update"}})
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: sc.ns + "-" + name}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sc.ns + "-" + name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sc.ns, Name: name}}}
	for _, o := range []client.Object{role, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatalf("TokenRequest for %s: %v", name, err)
	}
	if tr.Status.Token == "" {
		t.Fatalf("TokenRequest for %s gave no token", name)
	}
	return tr.Status.Token
}

func ptr[T any](v T) *T { return &v }

// waitApps waits until the Sync's apps show these "sync/health" states.
func (sc *scenario) waitApps(t *testing.T, want map[string]string) *olmsyncv1alpha1.Sync {
	t.Helper()
	got := &olmsyncv1alpha1.Sync{}
	olmtest.Eventually(t, fmt.Sprintf("Sync %s apps %v", sc.sync.Name, want), func() error {
		if err := sc.env.Client.Get(context.Background(), client.ObjectKeyFromObject(sc.sync), got); err != nil {
			return err
		}
		have := map[string]string{}
		for _, a := range got.Status.Apps {
			have[a.Name] = string(a.Sync) + "/" + string(a.Health)
		}
		for app, state := range want {
			if have[app] != state {
				return fmt.Errorf("apps %v (%+v)", have, got.Status.Apps)
			}
		}
		return nil
	})
	return got
}

// call makes a request of the dashboard with a token ("" for none) and headers, and
// returns the status and body.
func (sc *scenario) call(t *testing.T, method, path, token string, headers map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, sc.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// get reads a JSON answer into out, failing unless the status is 200.
func (sc *scenario) get(t *testing.T, path, token string, out any) {
	t.Helper()
	status, body := sc.call(t, http.MethodGet, path, token, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
}

// logSink keeps what the dashboard logs, as lines, for the action log's test.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) Init(logr.RuntimeInfo)          {}
func (l *logSink) Enabled(int) bool               { return true }
func (l *logSink) Error(error, string, ...any)    {}
func (l *logSink) WithValues(...any) logr.LogSink { return l }
func (l *logSink) WithName(string) logr.LogSink   { return l }
func (l *logSink) Info(_ int, msg string, kv ...any) {
	if !strings.HasPrefix(msg, "dashboard") {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	line := msg
	for i := 0; i+1 < len(kv); i += 2 {
		line += fmt.Sprintf(" %v %v", kv[i], kv[i+1])
	}
	l.lines = append(l.lines, line)
}

func (l *logSink) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
