package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/dashboard"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// The Sync BenchmarkGraph draws: five apps of ten Subscriptions and forty ConfigMaps
// each, every Subscription with its chain (InstallPlan, CSV, Deployment, ReplicaSet,
// Pod), and a cluster-scope app with the namespaces, their OperatorGroups and the
// CatalogSource: 511 objects.
const (
	graphApps          = 5
	graphSubscriptions = 10
	graphConfigMaps    = 40
	graphObjects       = graphApps*(graphSubscriptions*6+graphConfigMaps) + 2*graphApps + 1
)

// BenchmarkGraph measures the resource graph of a Sync of 511 objects in Debian's
// chromium (testdata/browser/bench-graph.mjs): from navigating to the Sync's page to its
// graph drawn (the view read from the API included), and the drawing of all 511 nodes
// and their edges once every group is expanded, from the click to the frame after it
// painted. The Sync is reconciled by `olmsync run` from a repository on a git server on
// loopback; the benchmark plays OLM (the embedded one is off) and the ReplicaSet
// controller for its Subscriptions. `make bench-graph` runs it; the figures are medians
// of ROUNDS rounds (5) in one chromium.
func BenchmarkGraph(b *testing.B) {
	node, chromium := browserTools(b)
	env := testenv.Get(b)
	stamp := time.Now().UnixNano() % 100000
	prefix := fmt.Sprintf("graph-%d", stamp)
	up := gittest.NewUpstream(b, graphRepository(prefix))
	srv := gittest.Serve(b, up, gittest.ServerOptions{})
	addr := testenv.FreeAddr(b)
	url := "http://" + addr
	ctx, cancel := context.WithCancel(context.Background())
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	mgr, err := reconcile.NewManager(ctx, cfg, reconcile.Options{
		OLM: olm.ModeExternal, MetricsAddr: "0", ProbeAddr: "0", WebhookAddr: "0", Logger: logr.Discard(),
		Sync:          gitsync.Options{CacheDir: b.TempDir(), RetryInterval: time.Second, HealthPollInterval: time.Second},
		CacheByObject: dashboard.CacheByObject(),
	})
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	d, err := dashboard.OnManager(mgr, cfg, addr, true)
	if err == nil {
		err = mgr.Add(d)
	}
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var namespaces []string
	for i := range graphApps {
		namespaces = append(namespaces, fmt.Sprintf("%s-%d", prefix, i))
	}
	kubelet := make(chan struct{})
	go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, namespaces...); close(kubelet) }()
	b.Cleanup(func() {
		cancel()
		<-kubelet
		olmtest.CheckStopped(b, "manager", <-done)
	})
	olmtest.EnsureNamespace(b, env, "olmsync-bench")
	sync := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: "olmsync-bench", Name: prefix},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: srv.RepoURL(), Interval: metav1.Duration{Duration: time.Hour}},
			Interval: metav1.Duration{Duration: time.Hour}, Prune: true,
			Policy: olmsyncv1alpha1.PolicySpec{Mode: olmsyncv1alpha1.PolicyModeAudit},
		},
	}
	start := time.Now()
	if err := env.Client.Create(context.Background(), sync); err != nil {
		b.Fatal(err)
	}
	olmtest.Eventually(b, "the Sync applied its six apps", func() error {
		got := &olmsyncv1alpha1.Sync{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(sync), got); err != nil {
			return err
		}
		if got.Status.LastAppliedRevision == "" || len(got.Status.Apps) != graphApps+1 {
			return fmt.Errorf("applied %q, %d apps", got.Status.LastAppliedRevision, len(got.Status.Apps))
		}
		return nil
	})
	for _, ns := range namespaces {
		for j := range graphSubscriptions {
			playOLM(b, env, ns, fmt.Sprintf("p%d", j))
		}
	}
	viewPath := "/api/v1/syncs/" + sync.Namespace + "/" + sync.Name
	olmtest.Eventually(b, fmt.Sprintf("the graph of %d objects, down to the Pods", graphObjects), func() error {
		body, err := fetch(url + viewPath)
		if err != nil {
			return err
		}
		var v struct {
			Graph dashboard.Graph `json:"graph"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			return err
		}
		objects, running := 0, 0
		for _, n := range v.Graph.Nodes {
			if n.Kind != "Sync" && n.Kind != "App" {
				objects++
			}
			if n.Kind == "Pod" && n.Phase == "Running" {
				running++
			}
		}
		if objects != graphObjects || running != graphApps*graphSubscriptions {
			return fmt.Errorf("%d objects, %d Pods running", objects, running)
		}
		return nil
	})
	b.Logf("a Sync of %d objects set up in %s", graphObjects, time.Since(start).Round(time.Millisecond))

	args := []string{"DASHBOARD_URL=" + url, "SYNC=" + sync.Namespace + "/" + sync.Name, "OBJECTS=" + strconv.Itoa(graphObjects), "ROUNDS=5"}
	if dir := os.Getenv("OLMSYNC_ARTIFACTS"); dir != "" {
		dir, err := filepath.Abs(filepath.Join(dir, "dashboard"))
		if err == nil && os.MkdirAll(dir, 0o755) == nil {
			args = append(args, "ARTIFACTS="+dir)
		}
	}
	figures := map[string]float64{}
	for b.Loop() {
		for k, v := range runFigures(b, node, chromium, "bench-graph.mjs", args...) {
			figures[k] += v
		}
	}
	for _, name := range []string{"load-to-graph-ms", "collapsed-nodes", "expand-all-draw-ms", "expand-all-js-ms", "expanded-nodes", "expanded-edges"} {
		v, ok := figures[name]
		if !ok {
			b.Fatalf("bench-graph.mjs printed no %s", name)
		}
		b.ReportMetric(v/float64(b.N), name)
	}
}

// graphRepository is the repository of BenchmarkGraph's Sync.
func graphRepository(prefix string) map[string]string {
	files := map[string]string{}
	var apps, nss, ogs strings.Builder
	apps.WriteString("apps:\n- {name: cluster-scope, path: cluster-scope}\n")
	for i := range graphApps {
		ns := fmt.Sprintf("%s-%d", prefix, i)
		fmt.Fprintf(&apps, "- {name: app-%d, path: app-%d, namespace: %s}\n", i, i, ns)
		fmt.Fprintf(&nss, "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
		fmt.Fprintf(&ogs, "---\napiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og, namespace: %[1]s}\nspec: {targetNamespaces: [%[1]s]}\n", ns)
		var subs, cms strings.Builder
		for j := range graphSubscriptions {
			fmt.Fprintf(&subs, "---\napiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: p%d}\nspec: {name: p%d, channel: stable, source: cat, sourceNamespace: %s-0}\n", j, j, prefix)
		}
		for j := range graphConfigMaps {
			fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings-%02d}\ndata: {n: \"%d\"}\n", j, j)
		}
		files[fmt.Sprintf("app-%d/subscriptions.yaml", i)] = subs.String()
		files[fmt.Sprintf("app-%d/settings.yaml", i)] = cms.String()
	}
	fmt.Fprintf(&apps, "policy:\n  marketplaceNamespace: %s-0\n  operatorGroups: []\n", prefix)
	files["olmsync.yaml"] = apps.String()
	files["cluster-scope/namespaces.yaml"] = nss.String()
	files["cluster-scope/operatorgroups.yaml"] = ogs.String()
	files["cluster-scope/catalogsource.yaml"] = fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: cat, namespace: %s-0}\nspec: {sourceType: grpc, image: example.com/catalog:1, displayName: cat}\n", prefix)
	return files
}

// playOLM does for a Subscription what OLM and the ReplicaSet controller would: an
// InstallPlan, Complete; a CSV, Succeeded; its Deployment, available (the kubelet
// stand-in), with a ReplicaSet and a Pod; and the Subscription's status naming them.
func playOLM(b *testing.B, env *testenv.Env, ns, pkg string) {
	ctx := context.Background()
	bundle := olmtest.Bundle{Package: pkg, Version: "1.0.0"}
	env.Create(b, strings.Join([]string{
		strings.Replace(bundle.CSV(), "metadata:\n", fmt.Sprintf("metadata:\n  namespace: %s\n", ns), 1) +
			"status: {phase: Succeeded, reason: InstallSucceeded, message: install strategy completed with no errors}\n",
		fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nmetadata: {name: install-%[2]s, namespace: %[1]s}\n"+
			"spec: {clusterServiceVersionNames: [%[3]s], approval: Automatic, approved: true}\nstatus: {phase: Complete, catalogSources: []}\n", ns, pkg, bundle.Name()),
	}, "---\n"))
	labels := map[string]string{"app": pkg}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-operator"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: "example.com/operator:1"}}}}}}
	if err := env.Client.Create(ctx, dep); err != nil {
		b.Fatal(err)
	}
	if err := runDeployment(ctx, env.Client, dep, false); err != nil {
		b.Fatal(err)
	}
	patch := fmt.Sprintf(`{"status":{"state":"AtLatestKnown","installedCSV":%[1]q,"currentCSV":%[1]q,"installPlanRef":{"name":"install-%[2]s","namespace":%[3]q},"lastUpdated":"2026-01-01T00:00:00Z"}}`,
		bundle.Name(), pkg, ns)
	sub := &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg}}
	if err := env.Client.Status().Patch(ctx, sub, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		b.Fatal(err)
	}
}

// runFigures runs a script of testdata/browser and returns the figures it printed
// ("figure <name> <value>" lines); its other output goes to the log.
func runFigures(b *testing.B, node, chromium, script string, env ...string) map[string]float64 {
	b.Helper()
	cmd := exec.Command(node, script)
	cmd.Dir = filepath.Join("testdata", "browser")
	cmd.Env = append(append(os.Environ(), "CHROMIUM="+chromium), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	figures := map[string]float64{}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) == 3 && f[0] == "figure" {
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				b.Fatalf("%s: %q", script, lines.Text())
			}
			figures[f[1]] = v
			continue
		}
		b.Log(lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s: %v", script, err)
	}
	return figures
}
