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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/testenv"
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

// BenchmarkManySyncs measures one olmsync reconciling 50 Syncs of 100 objects each (5,000
// objects, one repository served by git http-backend, each Sync a folder of it) with the
// default 4 Syncs at once: the time from creating the Syncs to all of them Ready, the
// requests the manager sent the API server until then (requests/sync), the requests it
// sends per second once all is applied (idle-requests/s, over 10 s), and the growth of
// the manager's heap (heap-MB).
func BenchmarkManySyncs(b *testing.B) {
	const syncs = 50
	env := testenv.Get(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var requests atomic.Int64
		cfg := rest.CopyConfig(env.Config)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				return rt.RoundTrip(r)
			})
		})
		run := uniqueNS("bench-many")
		files := map[string]string{}
		var namespaces []string
		for n := range syncs {
			ns := fmt.Sprintf("%s-%02d", run, n)
			namespaces = append(namespaces, ns)
			for k, v := range benchRepository(fmt.Sprintf("s%02d/", n), ns) {
				files[k] = v
			}
		}
		createNamespace(b, env, run)
		up := gittest.NewUpstream(b, files)
		srv := gittest.Serve(b, up, gittest.ServerOptions{})
		head := up.Head(b)

		heapBefore := heapInUse()
		startManager(b, env, managerOptions{config: cfg})
		b.StartTimer()
		start := time.Now()
		var list []*olmsyncv1alpha1.Sync
		for n := range syncs {
			list = append(list, newSync(b, env, run, fmt.Sprintf("s%02d", n), srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
				spec.Path = fmt.Sprintf("s%02d", n)
				spec.Source.Interval = metav1.Duration{Duration: 10 * time.Minute}
				spec.Interval = metav1.Duration{Duration: time.Hour}
			}))
		}
		for _, s := range list {
			pollSync(b, env, s, 100*time.Millisecond, 10*time.Minute, "Ready at "+head, func(got *olmsyncv1alpha1.Sync) bool {
				return strings.HasSuffix(got.Status.LastAppliedRevision, head) && conditions.IsReady(got)
			})
		}
		elapsed := time.Since(start)
		b.StopTimer()
		applied := requests.Load()
		heapAfter := heapInUse()
		time.Sleep(10 * time.Second)
		idle := requests.Load() - applied

		for _, ns := range namespaces {
			if object(b, env, configMapGVK, ns, fmt.Sprintf("cm-%03d", benchObjects-1)) == nil {
				b.Fatalf("namespace %s lacks its last ConfigMap", ns)
			}
		}
		b.ReportMetric(elapsed.Seconds(), "s-to-ready")
		b.ReportMetric(float64(applied)/syncs, "requests/sync")
		b.ReportMetric(float64(idle)/10, "idle-requests/s")
		b.ReportMetric(float64(int64(heapAfter)-int64(heapBefore))/(1<<20), "heap-MB")
		b.StartTimer()
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
