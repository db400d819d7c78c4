package dashboard_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/dashboard"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// Bench sizes: 200 Syncs of 10 objects each (a Subscription with its InstallPlan and CSV,
// seven ConfigMaps), 2,000 objects.
const (
	benchSyncs       = 200
	benchConfigMaps  = 7
	benchObjectsEach = benchConfigMaps + 3
)

// BenchmarkDashboard measures the dashboard of `olmsync run` (reconcile.NewManager, the
// embedded OLM off so that the objects keep the status the benchmark gives them, the
// Syncs suspended so that the reconciler leaves their apps and inventory alone) over 200
// Syncs and 2,000 objects on envtest:
//
//   - list: GET /api/v1/syncs, every Sync with its apps, until the whole answer is read;
//   - view: GET /api/v1/syncs/{ns}/{name}, the tree with the OLM chain read from the cache;
//   - update: from a status patch of a Sync to its "change" event on /api/v1/stream.
//
// list's first-ms is the first list's time right after the manager started (its cache
// synced). Reads are anonymous (--dashboard-anonymous-read): a token's reviews are cached
// for 10 s and cost one request each when they are not.
func BenchmarkDashboard(b *testing.B) {
	env := testenv.Get(b)
	stamp := time.Now().UnixNano() % 100000
	ns := fmt.Sprintf("bench-%d", stamp)
	olmtest.EnsureNamespace(b, env, ns)
	start := time.Now()
	keys := seedSyncs(b, env, ns)
	b.Logf("seeded %d Syncs and %d objects in %s", benchSyncs, benchSyncs*benchObjectsEach, time.Since(start).Round(time.Millisecond))

	addr := testenv.FreeAddr(b)
	url := "http://" + addr
	ctx, cancel := context.WithCancel(context.Background())
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	mgr, err := reconcile.NewManager(ctx, cfg, reconcile.Options{
		OLM: olm.ModeExternal, MetricsAddr: "0", ProbeAddr: "0", WebhookAddr: "0",
		Sync:          gitsync.Options{CacheDir: b.TempDir()},
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
	b.Cleanup(func() {
		cancel()
		olmtest.CheckStopped(b, "manager", <-done)
	})
	// The first answer the dashboard gives once it listens: the list, read whole.
	var first time.Duration
	olmtest.Eventually(b, "the dashboard lists every Sync", func() error {
		t0 := time.Now()
		body, err := fetch(url + "/api/v1/syncs?namespace=" + ns)
		if err != nil {
			return err
		}
		if n := strings.Count(body, `"name":"team"`); n != benchSyncs {
			return fmt.Errorf("%d Syncs listed with their app", n)
		}
		first = time.Since(t0)
		return nil
	})
	b.Run("list", func(b *testing.B) {
		for b.Loop() {
			if _, err := fetch(url + "/api/v1/syncs"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
	})
	b.Run("view", func(b *testing.B) {
		i := 0
		for b.Loop() {
			k := keys[i%len(keys)]
			i++
			body, err := fetch(url + "/api/v1/syncs/" + k.Namespace + "/" + k.Name)
			if err != nil {
				b.Fatal(err)
			}
			if !strings.Contains(body, `"phase":"Succeeded"`) {
				b.Fatalf("no CSV Succeeded in the view: %.300s", body)
			}
		}
	})
	// browser: the same in Debian's chromium (bench.mjs): the list of 200 Syncs drawn, a
	// Sync's view drawn, and a status patch shown on the page through the stream.
	b.Run("browser", func(b *testing.B) {
		node, chromium := browserTools(b)
		k := keys[0]
		var list, view, update, below float64
		for b.Loop() {
			figures := runBenchPage(b, node, chromium, url, ns, k, func() {
				patch := `{"status":{"apps":[{"name":"team","namespace":"` + ns + `","sync":"Synced","health":"Degraded","objects":8}]}}`
				obj := &olmsyncv1alpha1.Sync{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}}
				if err := env.Client.Status().Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
					b.Fatal(err)
				}
			})
			list, view, update = list+figures["list-render-ms"], view+figures["view-render-ms"], update+figures["update-on-page-ms"]
			below += figures["tiles-below-screen"]
			// Back to Healthy for the next round.
			patch := `{"status":{"apps":[{"name":"team","namespace":"` + ns + `","sync":"Synced","health":"Healthy","objects":8}]}}`
			obj := &olmsyncv1alpha1.Sync{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}}
			if err := env.Client.Status().Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				b.Fatal(err)
			}
		}
		n := float64(b.N)
		b.ReportMetric(list/n, "list-render-ms")
		b.ReportMetric(view/n, "view-render-ms")
		b.ReportMetric(update/n, "update-on-page-ms")
		b.ReportMetric(below/n, "tiles-below-screen")
	})
	b.Run("update", func(b *testing.B) {
		resp := openStream(b, url)
		defer resp.Body.Close()
		events := changes(resp.Body)
		i := 0
		for b.Loop() {
			k := keys[i%len(keys)]
			i++
			patch := fmt.Sprintf(`{"status":{"lastHandledReconcileAt":"bench-%d"}}`, i)
			obj := &olmsyncv1alpha1.Sync{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}}
			if err := env.Client.Status().Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				b.Fatal(err)
			}
			want := fmt.Sprintf(`{"kind":"Sync","namespace":%q,"name":%q}`, k.Namespace, k.Name)
			for got := range events {
				if got == want {
					break
				}
			}
		}
	})
}

// fetch reads a whole answer; anything but 200 is an error.
func fetch(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %d %.200s", url, resp.StatusCode, body)
	}
	return string(body), err
}

// openStream opens /api/v1/stream; the caller closes its body.
func openStream(b *testing.B, url string) *http.Response {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/v1/stream", nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	return resp
}

// changes sends the data of each event of a stream until it ends.
func changes(body io.Reader) <-chan string {
	out := make(chan string, 1024)
	go func() {
		lines := bufio.NewScanner(body)
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				out <- data
			}
		}
		close(out)
	}()
	return out
}

// seedSyncs creates, in namespaces of their own, 200 suspended Syncs whose status says
// what a reconcile would have: an app team of ten objects, its inventory, a violation, a
// history; and the objects — a Subscription AtLatestKnown, its Complete InstallPlan and
// Succeeded CSV, seven ConfigMaps.
func seedSyncs(b *testing.B, env *testenv.Env, syncNS string) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, benchSyncs)
	for i := range benchSyncs {
		keys = append(keys, seedSync(b, env, syncNS, i))
	}
	return keys
}

func seedSync(b *testing.B, env *testenv.Env, syncNS string, i int) types.NamespacedName {
	ctx := context.Background()
	ns := fmt.Sprintf("%s-%d", syncNS, i)
	csv := olmtest.Bundle{Package: "widget", Version: "1.0.0"}
	var docs []string
	docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns))
	docs = append(docs, strings.Replace(csv.CSV(), "metadata:\n", fmt.Sprintf("metadata:\n  namespace: %s\n", ns), 1)+
		"status: {phase: Succeeded, reason: InstallSucceeded, message: install strategy completed with no errors}\n")
	docs = append(docs, fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nmetadata: {name: install-1, namespace: %s}\n"+
		"spec: {clusterServiceVersionNames: [widget.v1.0.0], approval: Automatic, approved: true}\nstatus: {phase: Complete, catalogSources: []}\n", ns))
	docs = append(docs, fmt.Sprintf("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: widget, namespace: %[1]s}\n"+
		"spec: {name: widget, channel: stable, source: cat, sourceNamespace: %[1]s}\n"+
		"status: {state: AtLatestKnown, installedCSV: widget.v1.0.0, currentCSV: widget.v1.0.0, installPlanRef: {name: install-1, namespace: %[1]s}, lastUpdated: \"2026-01-01T00:00:00Z\"}\n", ns))
	entries := []olmsyncv1alpha1.ResourceRef{{ID: ns + "_widget_operators.coreos.com_Subscription", Version: "v1alpha1"}}
	for c := range benchConfigMaps {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: %s}\ndata: {n: \"%d\"}\n", c, ns, c))
		entries = append(entries, olmsyncv1alpha1.ResourceRef{ID: fmt.Sprintf("%s_cm-%d__ConfigMap", ns, c), Version: "v1"})
	}
	env.Create(b, strings.Join(docs, "---\n"))
	s := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: syncNS, Name: fmt.Sprintf("sync-%d", i)},
		Spec: olmsyncv1alpha1.SyncSpec{Source: olmsyncv1alpha1.GitSource{URL: "https://github.com/acme/clusters.git", Interval: metav1.Duration{Duration: time.Hour}},
			Interval: metav1.Duration{Duration: time.Hour}, Suspend: true},
	}
	if err := env.Client.Create(ctx, s); err != nil {
		b.Fatal(err)
	}
	now := metav1.Now()
	s.Status = olmsyncv1alpha1.SyncStatus{
		LastFetchedRevision: "main@sha1:0123456789abcdef0123456789abcdef01234567", LastAppliedRevision: "main@sha1:0123456789abcdef0123456789abcdef01234567",
		LastAppliedCommit: &olmsyncv1alpha1.CommitMetadata{Subject: "widget for the team", Author: "bench"},
		Inventory:         &olmsyncv1alpha1.ResourceInventory{Entries: entries},
		Apps:              []olmsyncv1alpha1.AppStatus{{Name: "team", Namespace: ns, Sync: olmsyncv1alpha1.SyncStatusSynced, Health: olmsyncv1alpha1.HealthHealthy, Objects: benchObjectsEach - 2}},
		Violations:        []olmsyncv1alpha1.PolicyViolation{{Rule: "OP011", Severity: "error", Message: "m", App: "team", File: "team/cm.yaml", Line: 3}},
		ViolationCount:    1,
		History: []olmsyncv1alpha1.ReconcileSnapshot{{Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567", FirstReconciled: now, LastReconciled: now,
			LastReconciledDuration: metav1.Duration{Duration: time.Second}, LastReconciledStatus: "ReconciliationSucceeded", Applied: true, TotalReconciles: 1}},
	}
	if err := env.Client.Status().Update(ctx, s); err != nil {
		b.Fatal(err)
	}
	return client.ObjectKeyFromObject(s)
}

// runBenchPage runs bench.mjs once: patch is called when the page waits for the status
// change. It returns the figures the script printed.
func runBenchPage(b *testing.B, node, chromium, url, ns string, k types.NamespacedName, patch func()) map[string]float64 {
	b.Helper()
	cmd := exec.Command(node, "bench.mjs")
	cmd.Dir = filepath.Join("testdata", "browser")
	cmd.Env = append(os.Environ(), "DASHBOARD_URL="+url, "NAMESPACE="+ns, "SYNC="+k.String(),
		"COUNT="+strconv.Itoa(benchSyncs), "CHROMIUM="+chromium)
	if dir := os.Getenv("OLMSYNC_ARTIFACTS"); dir != "" {
		if dir, err := filepath.Abs(filepath.Join(dir, "dashboard")); err == nil && os.MkdirAll(dir, 0o755) == nil {
			cmd.Env = append(cmd.Env, "ARTIFACTS="+dir)
		}
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	figures := map[string]float64{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if line == "ready-for-update" {
			patch()
			if _, err := io.WriteString(stdin, "patched\n"); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if f := strings.Fields(line); len(f) == 3 && f[0] == "figure" {
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				b.Fatalf("bench.mjs: %q", line)
			}
			figures[f[1]] = v
		}
	}
	if err := cmd.Wait(); err != nil {
		b.Fatalf("bench.mjs: %v", err)
	}
	for _, name := range []string{"list-render-ms", "view-render-ms", "update-on-page-ms"} {
		if _, ok := figures[name]; !ok {
			b.Fatalf("bench.mjs printed no %s", name)
		}
	}
	return figures
}
