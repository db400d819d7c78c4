package gitsync_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/kube"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/receiver"
)

// benchObjects is how many objects each benchmark repository holds: its Namespace and
// benchObjects-1 ConfigMaps.
const benchObjects = 100

// benchRepository is a repository of benchObjects objects in namespace ns under folder
// dir ("" for the root): a cluster-scope app with the Namespace and an app "team" of
// ConfigMaps. value goes into every ConfigMap, so that changing it changes all of them.
func benchRepository(dir, ns string) map[string]string {
	files := map[string]string{
		dir + "olmsync.yaml":                 fmt.Sprintf("apps:\n- {name: cluster-scope, path: cluster-scope}\n- {name: team, path: team, namespace: %s}\n", ns),
		dir + "cluster-scope/namespace.yaml": fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns),
	}
	for i := 1; i < benchObjects; i++ {
		files[fmt.Sprintf("%steam/cm-%03d.yaml", dir, i)] = benchConfigMap(i, "0")
	}
	return files
}

func benchConfigMap(i int, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%03d\ndata:\n  value: %q\n", i, value)
}

// BenchmarkCommitToApplied measures how long a commit takes to be applied, from the push
// to the Sync's status.lastAppliedRevision naming it, for a repository of 100 objects
// served by git http-backend: announced by a signed GitHub push webhook, and found by
// polling every 10 s (each commit pushed at a random moment of the interval). One op is
// commitsPerOp commits in a row, each changing one ConfigMap; ms/commit is their mean
// latency from the moment the server has the commit, max-ms/commit the slowest.
func BenchmarkCommitToApplied(b *testing.B) {
	const commitsPerOp = 5
	env := testenv.Get(b)
	m := startManager(b, env, managerOptions{})
	for _, tc := range []struct {
		name     string
		interval time.Duration
		webhook  bool
	}{
		{name: "webhook", interval: time.Hour, webhook: true},
		{name: "poll-10s", interval: 10 * time.Second},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ns := uniqueNS("bench-latency")
			createNamespace(b, env, ns)
			up := gittest.NewUpstream(b, benchRepository("", ns))
			srv := gittest.Serve(b, up, gittest.ServerOptions{})
			token := []byte("bench-webhook-token")
			if err := env.Client.Create(context.Background(), &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook"},
				Data:       map[string][]byte{olmsyncv1alpha1.WebhookGitHubTokenKey: token},
			}); err != nil {
				b.Fatal(err)
			}
			s := newSync(b, env, ns, "bench", srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
				spec.Source.Interval = metav1.Duration{Duration: tc.interval}
				spec.Interval = metav1.Duration{Duration: time.Hour}
				spec.Webhook = &olmsyncv1alpha1.WebhookSpec{SecretRef: olmsyncv1alpha1.LocalObjectReference{Name: "hook"}}
			})
			appliedAt(b, env, s, up.Head(b))
			hook := m.webhook + "/hooks/" + ns + "/" + s.Name

			var total, slowest time.Duration
			commits := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for c := 0; c < commitsPerOp; c++ {
					commits++
					if !tc.webhook {
						// A commit lands at any moment of the polling interval, not right
						// after the last fetch.
						b.StopTimer()
						time.Sleep(time.Duration(rand.Int64N(int64(tc.interval))))
						b.StartTimer()
					}
					commit := up.Push(b, map[string]string{
						fmt.Sprintf("team/cm-%03d.yaml", 1+commits%(benchObjects-1)): benchConfigMap(1+commits%(benchObjects-1), fmt.Sprint(commits)),
					}, fmt.Sprintf("commit %d", commits))
					start := time.Now()
					if tc.webhook {
						body := fmt.Appendf(nil, `{"ref":"refs/heads/main","after":%q}`, commit)
						if code := post(b, hook, map[string]string{receiver.GitHubSignatureHeader: sign(token, body), "X-GitHub-Event": "push"}, body); code/100 != 2 {
							b.Fatalf("webhook answered %d", code)
						}
					}
					waitApplied(b, env, s, commit)
					d := time.Since(start)
					total += d
					slowest = max(slowest, d)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(total.Milliseconds())/float64(commits), "ms/commit")
			b.ReportMetric(float64(slowest.Milliseconds()), "max-ms/commit")
		})
	}
}

// waitApplied polls the Sync every 20 ms until its last applied revision is commit.
func waitApplied(tb testing.TB, env *testenv.Env, s *olmsyncv1alpha1.Sync, commit string) {
	tb.Helper()
	pollSync(tb, env, s, 20*time.Millisecond, 2*time.Minute, "applied "+commit, func(got *olmsyncv1alpha1.Sync) bool {
		return strings.HasSuffix(got.Status.LastAppliedRevision, commit)
	})
}

// pollSync reads the Sync every so often until done says so, failing after timeout with
// what it waited for and the Sync's conditions.
func pollSync(tb testing.TB, env *testenv.Env, s *olmsyncv1alpha1.Sync, every, timeout time.Duration, what string, done func(*olmsyncv1alpha1.Sync) bool) {
	tb.Helper()
	var got *olmsyncv1alpha1.Sync
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(every) {
		var err error
		if got, err = getSync(env, s); err != nil {
			tb.Fatal(err)
		}
		if done(got) {
			return
		}
	}
	var conds []string
	for _, c := range got.Status.Conditions {
		conds = append(conds, c.Type+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
	}
	tb.Fatalf("Sync %s/%s not %s in %s: %s", s.Namespace, s.Name, what, timeout, strings.Join(conds, "; "))
}

// The shape of BenchmarkManySyncs (issue 18: `olmsync run` with 200 Syncs × 50 objects).
const (
	manySyncs   = 200
	manyObjects = 50
)

// manyRepository is the repository of BenchmarkManySyncs: one folder per Sync, each with
// its Namespace and manyObjects-1 ConfigMaps holding value.
func manyRepository(run, value string) (files map[string]string, namespaces []string) {
	files = map[string]string{}
	for n := range manySyncs {
		ns := fmt.Sprintf("%s-%03d", run, n)
		namespaces = append(namespaces, ns)
		dir := fmt.Sprintf("s%03d/", n)
		files[dir+"olmsync.yaml"] = fmt.Sprintf("apps:\n- {name: cluster-scope, path: cluster-scope}\n- {name: team, path: team, namespace: %s}\n", ns)
		files[dir+"cluster-scope/namespace.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
		for i := 1; i < manyObjects; i++ {
			files[fmt.Sprintf("%steam/cm-%03d.yaml", dir, i)] = benchConfigMap(i, value)
		}
	}
	return files, namespaces
}

// BenchmarkManySyncs measures one olmsync reconciling 200 Syncs of 50 objects each
// (10,000 objects, one repository served by git http-backend, each Sync a folder of it)
// with the default 4 Syncs at once, and, in the same run, its floor: the same objects
// applied by the same applier (reconcile/apply) without the Sync machinery.
//
//   - s-to-ready: from creating the Syncs to all of them Ready (first apply: every object
//     created); requests/sync the requests the manager sent until then; heap-MB the growth
//     of the process's heap; idle-requests/s what it sends once all is applied (over 10 s).
//   - s-commit: after a commit that changes every ConfigMap of every Sync, from asking every
//     Sync to reconcile (the reconcile-request annotation, as `olmsync reconcile` does) to
//     all of them Ready at the commit: fetch, render, policy check, apply, prune, health.
//     requests/sync-commit are the manager's requests meanwhile.
//   - s-apply-only: the same 10,000 objects, every ConfigMap changed again, applied with
//     apply.Applier (the Sync's owner labels, the default per-object concurrency), four
//     Syncs' objects at once as the reconciler's four workers do, through a client of the
//     same configuration (no client-side rate limit, as `olmsync run`).
//   - x-apply-only = s-commit / s-apply-only (issue 18's goal: ≤ 2).
func BenchmarkManySyncs(b *testing.B) {
	env := testenv.Get(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var requests atomic.Int64
		cfg := rest.CopyConfig(env.Config)
		cfg.QPS = -1 // as olmsync run (internal/kube.Config): the API server's fairness throttles
		counted := rest.CopyConfig(cfg)
		counted.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				return rt.RoundTrip(r)
			})
		})
		run := uniqueNS("bench-many")
		files, namespaces := manyRepository(run, "0")
		createNamespace(b, env, run)
		up := gittest.NewUpstream(b, files)
		srv := gittest.Serve(b, up, gittest.ServerOptions{})
		head := up.Head(b)

		heapBefore := heapInUse()
		startManager(b, env, managerOptions{config: counted})
		b.StartTimer()
		start := time.Now()
		var list []*olmsyncv1alpha1.Sync
		for n := range manySyncs {
			list = append(list, newSync(b, env, run, fmt.Sprintf("s%03d", n), srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
				spec.Path = fmt.Sprintf("s%03d", n)
				spec.Source.Interval = metav1.Duration{Duration: time.Hour}
				spec.Interval = metav1.Duration{Duration: time.Hour}
			}))
		}
		waitAllReady(b, env, list, head)
		elapsed := time.Since(start)
		b.StopTimer()
		applied := requests.Load()
		heapAfter := heapInUse()
		time.Sleep(10 * time.Second)
		idle := requests.Load() - applied

		// A commit changing every object but the Namespaces, then every Sync asked to
		// reconcile at once.
		changed, _ := manyRepository(run, "1")
		commit := up.Push(b, changed, "change every ConfigMap")
		before := requests.Load()
		b.StartTimer()
		start = time.Now()
		for _, s := range list {
			requestReconcile(b, env, s, commit)
		}
		waitAllReady(b, env, list, commit)
		reconciled := time.Since(start)
		b.StopTimer()
		commitRequests := requests.Load() - before
		for _, ns := range namespaces {
			cm := object(b, env, configMapGVK, ns, fmt.Sprintf("cm-%03d", manyObjects-1))
			if v, _, _ := unstructured.NestedString(cm.Object, "data", "value"); v != "1" {
				b.Fatalf("namespace %s: last ConfigMap holds %q after the commit, want \"1\"", ns, v)
			}
		}

		applyOnly, applyRequests := applyAll(b, cfg, list, namespaces)
		for _, ns := range namespaces {
			cm := object(b, env, configMapGVK, ns, fmt.Sprintf("cm-%03d", manyObjects-1))
			if v, _, _ := unstructured.NestedString(cm.Object, "data", "value"); v != "2" {
				b.Fatalf("namespace %s: last ConfigMap holds %q after the apply alone, want \"2\"", ns, v)
			}
		}
		b.ReportMetric(elapsed.Seconds(), "s-to-ready")
		b.ReportMetric(float64(applied)/manySyncs, "requests/sync")
		b.ReportMetric(float64(idle)/10, "idle-requests/s")
		b.ReportMetric(float64(int64(heapAfter)-int64(heapBefore))/(1<<20), "heap-MB")
		b.ReportMetric(reconciled.Seconds(), "s-commit")
		b.ReportMetric(float64(commitRequests)/manySyncs, "requests/sync-commit")
		b.ReportMetric(applyOnly.Seconds(), "s-apply-only")
		b.ReportMetric(float64(applyRequests)/manySyncs, "requests/sync-apply-only")
		b.ReportMetric(reconciled.Seconds()/applyOnly.Seconds(), "x-apply-only")
		b.StartTimer()
	}
}

// waitAllReady waits until every Sync is Ready at commit.
func waitAllReady(b *testing.B, env *testenv.Env, list []*olmsyncv1alpha1.Sync, commit string) {
	b.Helper()
	for _, s := range list {
		pollSync(b, env, s, 100*time.Millisecond, 15*time.Minute, "Ready at "+commit, func(got *olmsyncv1alpha1.Sync) bool {
			return strings.HasSuffix(got.Status.LastAppliedRevision, commit) && conditions.IsReady(got)
		})
	}
}

// requestReconcile sets the Sync's reconcile-request annotation to value.
func requestReconcile(b *testing.B, env *testenv.Env, s *olmsyncv1alpha1.Sync, value string) {
	b.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, olmsyncv1alpha1.ReconcileRequestAnnotation, value)
	if err := env.Client.Patch(context.Background(), s.DeepCopy(), client.RawPatch(types.MergePatchType, patch)); err != nil {
		b.Fatal(err)
	}
}

// applyAll is BenchmarkManySyncs' floor: every Sync's objects, each ConfigMap with value
// "2", applied by an apply.Applier owned by that Sync, four Syncs at once. It returns the
// time taken and the requests sent.
func applyAll(b *testing.B, cfg *rest.Config, list []*olmsyncv1alpha1.Sync, namespaces []string) (time.Duration, int64) {
	b.Helper()
	var requests atomic.Int64
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			requests.Add(1)
			return rt.RoundTrip(r)
		})
	})
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	objs := make([][]*unstructured.Unstructured, len(list))
	for n, ns := range namespaces {
		nsObj := &unstructured.Unstructured{}
		nsObj.SetAPIVersion("v1")
		nsObj.SetKind("Namespace")
		nsObj.SetName(ns)
		objs[n] = append(objs[n], nsObj)
		for i := 1; i < manyObjects; i++ {
			cm := &unstructured.Unstructured{}
			cm.SetAPIVersion("v1")
			cm.SetKind("ConfigMap")
			cm.SetNamespace(ns)
			cm.SetName(fmt.Sprintf("cm-%03d", i))
			if err := unstructured.SetNestedField(cm.Object, "2", "data", "value"); err != nil {
				b.Fatal(err)
			}
			objs[n] = append(objs[n], cm)
		}
	}
	b.StartTimer()
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(4) // the Sync reconciler's default workers
	for n, s := range list {
		g.Go(func() error {
			a := &apply.Applier{Client: c, Owner: client.ObjectKeyFromObject(s)}
			res, err := a.Apply(context.Background(), objs[n])
			if err != nil {
				return err
			}
			return res.Err()
		})
	}
	err = g.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	return elapsed, requests.Load()
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
