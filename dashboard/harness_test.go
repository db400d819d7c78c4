package dashboard_test

import (
	"context"
	"encoding/base64"
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
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/dashboard"
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
//   - team: also twelve ConfigMaps (a fan-out the graph collapses), a Secret and a
//     secretGenerator's Secret, whose values the dashboard must never send (secretValues);
//   - broken: a Subscription to a package no catalog has (Degraded, ResolutionFailed) and
//     a Namespace outside the cluster-scope app (placement rule OP011).
//
// The Sync is in audit mode, so that the violation is reported and everything applied.
// A stand-in for the ReplicaSet controller gives each Deployment a ReplicaSet and a Pod.
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

// The values of the scenario's Secrets, which no answer of the dashboard may hold, in
// any form (secretForms).
const (
	secretPassword  = "hunter2-never-shown"
	secretToken     = "tok-never-shown"
	secretLiteral   = "literal-never-shown"
	secretFileValue = "file-never-shown"
)

// secretForms are the strings a leak of the scenario's Secrets would show: each value,
// and its base64 (a Secret's data).
func secretForms() []string {
	var out []string
	for _, v := range []string{secretPassword, secretToken, secretLiteral, secretFileValue} {
		out = append(out, v, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	return out
}

// settingsConfigMaps is how many ConfigMaps the team app has besides its Subscription.
const settingsConfigMaps = 12

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
		"team/kustomization.yaml": fmt.Sprintf(`resources: [subscription.yaml, settings.yaml, secret.yaml]
secretGenerator:
- name: generated
  literals: [api-key=%s]
  files: [cert.yaml]
`, secretLiteral),
		"team/cert.yaml":     "key: " + secretFileValue + "\n",
		"team/settings.yaml": settings(),
		"team/secret.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: credentials}\nstringData:\n  password: %s\ndata:\n  token: %s\n",
			secretPassword, base64.StdEncoding.EncodeToString([]byte(secretToken))),
		"broken/subscription.yaml":    fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: ghost}\nspec: {name: ghost, channel: stable, source: cat, sourceNamespace: %s}\n", ns),
		"broken/extra-namespace.yaml": fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s-extra\n", nsb),
	}
}

func settings() string {
	var docs []string
	for i := range settingsConfigMaps {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings-%02d}\ndata: {level: info}\n", i))
	}
	return strings.Join(docs, "---\n")
}

// newScenario starts the scenario and waits until the Sync shows its three apps as
// described, the InstallPlan waiting for approval.
func newScenario(t *testing.T, anonymousRead bool) *scenario {
	t.Helper()
	return newScenarioWith(t, anonymousRead, time.Minute)
}

// newScenarioWith is newScenario with the Sync's spec.interval (how soon drift is
// corrected): a test that makes drift to look at it sets a long one.
func newScenarioWith(t *testing.T, anonymousRead bool, interval time.Duration) *scenario {
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
			Interval: metav1.Duration{Duration: interval},
			Policy:   olmsyncv1alpha1.PolicySpec{Mode: olmsyncv1alpha1.PolicyModeAudit},
		},
	}
	if err := env.Client.Create(context.Background(), sc.sync); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.removeSync(t) })
	ctx, cancel := context.WithCancel(context.Background())
	kubelet := make(chan struct{})
	workloads := make(chan struct{})
	go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, sc.ns); close(kubelet) }()
	go func() { keepReplicaSets(ctx, env.Client, sc.ns); close(workloads) }()
	t.Cleanup(func() { cancel(); <-kubelet; <-workloads })
	sc.viewer = sc.token(t, "viewer", false)
	sc.approver = sc.token(t, "approver", true)
	sc.waitApps(t, map[string]string{"cluster-scope": "Synced/Healthy", "team": "Synced/WaitingForApproval", "broken": "Synced/Degraded"})
	return sc
}

// keepReplicaSets plays the ReplicaSet controller and the kubelet envtest lacks until
// ctx ends: each Deployment in ns gets a ReplicaSet it controls, of one replica, ready,
// and that ReplicaSet a Pod it controls, Pending until the CSV that owns the Deployment
// (olm.owner) has been Succeeded for podDelay, then Running and Ready: the graph has to
// follow a Pod that changes after OLM's objects have settled, as when a Pod restarts.
func keepReplicaSets(ctx context.Context, c client.Client, ns string) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	done := map[types.UID]bool{}
	for {
		var list appsv1.DeploymentList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err == nil {
			for i := range list.Items {
				d := &list.Items[i]
				if done[d.UID] {
					continue
				}
				pending := !csvSucceededFor(ctx, c, d, podDelay)
				if runDeployment(ctx, c, d, pending) == nil && !pending {
					done[d.UID] = true
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// podDelay is how long keepReplicaSets keeps a Pod Pending after its CSV succeeded: past
// the writes that follow (the Subscription's state, the Sync's health).
const podDelay = 3 * time.Second

// csvSucceededFor says whether the CSV a Deployment's olm.owner label names (in its
// namespace) has been Succeeded for at least d; true for a Deployment no CSV owns.
func csvSucceededFor(ctx context.Context, c client.Client, dep *appsv1.Deployment, d time.Duration) bool {
	name := dep.Labels["olm.owner"]
	if name == "" {
		return true
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	err := c.Get(ctx, client.ObjectKey{Namespace: dep.Namespace, Name: name}, csv)
	return err == nil && csv.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded &&
		csv.Status.LastTransitionTime != nil && time.Since(csv.Status.LastTransitionTime.Time) >= d
}

// runDeployment makes a Deployment's ReplicaSet, ready, and its Pod, Running unless
// pending, as keepReplicaSets says.
func runDeployment(ctx context.Context, c client.Client, d *appsv1.Deployment, pending bool) error {
	ownedBy := func(o client.Object, kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: o.GetName(), UID: o.GetUID(), Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
	}
	labels := map[string]string{"app": d.Name}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-7d9f8", Labels: labels, OwnerReferences: ownedBy(d, "Deployment")},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: "example.com/operator:1"}}}}}}
	if err := c.Create(ctx, rs); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(rs), rs); err != nil {
		return err
	}
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: rs.Generation}
	if err := c.Status().Update(ctx, rs); err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: rs.Name + "-x2x4q", Labels: labels, OwnerReferences: ownedBy(rs, "ReplicaSet")},
		Spec: rs.Spec.Template.Spec}
	if err := c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if pending {
		return nil
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		return err
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "operator", Ready: true, Image: "example.com/operator:1",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	return c.Status().Update(ctx, pod)
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
		CacheByObject: dashboard.CacheByObject(),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	d, err := dashboard.OnManager(mgr, sc.env.Config, addr, anonymousRead)
	if err == nil {
		err = mgr.Add(d)
	}
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
