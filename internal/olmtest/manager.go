package olmtest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// LeaseNamespace holds the managers' leader-election Lease.
const LeaseNamespace = "olmsync-system"

// Manager is a running manager with every embedded OLM controller, leader election on.
type Manager struct {
	// Requests counts the HTTP requests the manager made to the API server.
	Requests *atomic.Int64
	// ByRequest counts them by method and resource (RequestKind), for a benchmark to say
	// where the requests go.
	ByRequest *RequestCounts
	// Refused counts the requests the API server answered with an error status (a 409
	// conflict of a write from a stale copy, a 404, a 429), by kind and status code: work
	// the API server did for nothing.
	Refused *RequestCounts
	// Cache reads the manager's cache: what its controllers see, at no request to the API
	// server (a benchmark watching for the end of a run through it does not load what it
	// measures). Nil once the manager is stopped.
	Cache client.Reader
	stop  context.CancelFunc
	done  chan error
}

// Stop stops the manager and waits for it (a test's Cleanup also does).
func (m *Manager) Stop(tb testing.TB) {
	tb.Helper()
	if m.done == nil {
		return
	}
	m.stop()
	CheckStopped(tb, "manager", <-m.done)
	m.done = nil
	// The test's Cleanup holds m to its end: a stopped manager's cache must not stay with it
	// (BenchmarkSteadyState's later rounds measured the earlier rounds' caches as heap).
	m.Cache = nil
}

// CheckStopped fails the test with err, what a manager's Start returned once stopped. Every
// harness that stops a manager checks its end so: a runnable that does not stop within the
// grace period is a bug (it was controller-runtime's priority queue up to v0.24.1,
// controller-runtime#3538; TestShutdownWithBusyQueues guards against its return).
func CheckStopped(tb testing.TB, what string, err error) {
	tb.Helper()
	if err != nil {
		tb.Errorf("%s stopped with: %v", what, err)
	}
}

// StartManager starts a manager running olm.SetupWithManager(opts) and waits until it leads.
func StartManager(tb testing.TB, env *testenv.Env, opts olm.Options) *Manager {
	tb.Helper()
	EnsureNamespace(tb, env, LeaseNamespace)
	requests := &atomic.Int64{}
	byRequest, refused := &RequestCounts{}, &RequestCounts{}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000 // the default 20/30 would measure client-side throttling
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return RoundTripFunc(func(r *http.Request) (*http.Response, error) {
			requests.Add(1)
			kind := RequestKind(r)
			byRequest.add(kind)
			resp, err := rt.RoundTrip(r)
			if err == nil && resp.StatusCode >= http.StatusBadRequest {
				refused.add(fmt.Sprintf("%s %d", kind, resp.StatusCode))
			}
			return resp, err
		})
	})
	// Generous: on a loaded machine (several -race test binaries on two cores) a 4s lease
	// was lost mid-test and the manager stopped; ReleaseOnCancel still hands it over at once.
	lease, renew, retry := 15*time.Second, 10*time.Second, time.Second
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        env.Scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              olm.LeaderElectionID,
		LeaderElectionNamespace:       LeaseNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		Controller:                    olm.ControllerConfig(),
		// As olmsync run's manager (reconcile.NewManager) caches objects.
		Cache: cache.Options{ByObject: olm.CacheByObject(), DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		tb.Fatalf("new manager: %v", err)
	}
	if opts.RetryInterval == 0 {
		opts.RetryInterval = time.Second
	}
	if err := olm.SetupWithManager(mgr, opts); err != nil {
		tb.Fatalf("set up controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{Requests: requests, ByRequest: byRequest, Refused: refused, Cache: mgr.GetCache(), stop: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	tb.Cleanup(func() { m.Stop(tb) })
	select {
	case <-mgr.Elected():
	case <-time.After(60 * time.Second):
		tb.Fatal("the manager did not become leader")
	}
	return m
}

// RequestCounts counts requests by kind; safe for concurrent use.
type RequestCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *RequestCounts) add(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[kind]++
}

// Count returns how many requests of kind were counted.
func (c *RequestCounts) Count(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[kind]
}

// All returns a copy of every kind's count.
func (c *RequestCounts) All() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// Top returns the n most frequent kinds with their counts, most frequent first, as
// "count kind" lines.
func (c *RequestCounts) Top(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	kinds := slices.Collect(maps.Keys(c.n))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Or(cmp.Compare(c.n[b], c.n[a]), cmp.Compare(a, b)) })
	var out []string
	for _, k := range kinds[:min(n, len(kinds))] {
		out = append(out, fmt.Sprintf("%6d %s", c.n[k], k))
	}
	return out
}

// RequestKind names a request by its method (WATCH for a watch) and resource (with its
// subresource), without namespace or name: "PUT clusterserviceversions/status".
func RequestKind(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// /api/v1/... or /apis/group/version/...
	switch {
	case len(parts) > 0 && parts[0] == "api":
		parts = parts[min(2, len(parts)):]
	case len(parts) > 0 && parts[0] == "apis":
		parts = parts[min(3, len(parts)):]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		parts = parts[2:]
	}
	method := r.Method
	if r.URL.Query().Get("watch") == "true" {
		method = "WATCH"
	}
	switch len(parts) {
	case 0:
		return method + " " + r.URL.Path
	case 1, 2:
		if method == http.MethodGet && len(parts) == 1 {
			method = "LIST"
		}
		return method + " " + parts[0]
	default:
		return method + " " + parts[0] + "/" + parts[2]
	}
}

// RoundTripFunc is a function as an http.RoundTripper, for a rest.Config's Wrap that counts
// or watches the requests a client makes.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var nsCounter atomic.Int64

// NewNamespace creates a namespace named prefix-N.
func NewNamespace(tb testing.TB, env *testenv.Env, prefix string) string {
	tb.Helper()
	name := fmt.Sprintf("%s-%d", prefix, nsCounter.Add(1))
	EnsureNamespace(tb, env, name)
	return name
}

// EnsureNamespace creates a namespace unless it exists.
func EnsureNamespace(tb testing.TB, env *testenv.Env, name string) {
	tb.Helper()
	err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if client.IgnoreAlreadyExists(err) != nil {
		tb.Fatal(err)
	}
}

// Create creates obj. An OperatorGroup is deleted when the test ends: groups left behind
// would intersect later tests' groups (the tests share one API server).
func Create(tb testing.TB, env *testenv.Env, obj client.Object) {
	tb.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		tb.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	if og, ok := obj.(*operatorsv1.OperatorGroup); ok {
		tb.Cleanup(func() { _ = env.Client.Delete(context.Background(), og) })
	}
}

// OwnGroup makes an OperatorGroup "og" of ns targeting ns.
func OwnGroup(tb testing.TB, env *testenv.Env, ns string) {
	tb.Helper()
	Create(tb, env, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}},
	})
}

// OwnGroupTargeted is OwnGroup with the status the OperatorGroup controller would write
// (status.namespaces: ns), for a test that runs no OperatorGroup controller.
func OwnGroupTargeted(tb testing.TB, env *testenv.Env, ns string) {
	tb.Helper()
	og := &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}},
	}
	Create(tb, env, og)
	now := metav1.Now()
	og.Status.Namespaces, og.Status.LastUpdated = []string{ns}, &now
	if err := env.Client.Status().Update(context.Background(), og); err != nil {
		tb.Fatalf("write the status of OperatorGroup %s/og: %v", ns, err)
	}
}

// Eventually polls check until it returns nil, failing the test with its last error after
// 90 seconds (an operator installed through a Sync under -race on a busy machine).
func Eventually(tb testing.TB, what string, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = check(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	tb.Fatalf("%s: %v", what, err)
}

// ReconcileStats reads controller-runtime's metrics (its global registry, which every
// manager of the process feeds) and says, per controller: reconciles by result, the time
// spent reconciling (the sum over workers), and the time items waited in the queue. A
// benchmark logs it to tell work from waiting.
func ReconcileStats() []string {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return []string{err.Error()}
	}
	type stat struct {
		results          map[string]float64
		busy, queued     float64
		reconciles, adds float64
	}
	stats := map[string]*stat{}
	get := func(name string) *stat {
		if stats[name] == nil {
			stats[name] = &stat{results: map[string]float64{}}
		}
		return stats[name]
	}
	label := func(m *dto.Metric, name string) string {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "controller_runtime_reconcile_total":
				get(label(m, "controller")).results[label(m, "result")] += m.GetCounter().GetValue()
			case "controller_runtime_reconcile_time_seconds":
				s := get(label(m, "controller"))
				s.busy += m.GetHistogram().GetSampleSum()
				s.reconciles += float64(m.GetHistogram().GetSampleCount())
			case "workqueue_queue_duration_seconds":
				get(label(m, "name")).queued += m.GetHistogram().GetSampleSum()
			case "workqueue_adds_total":
				get(label(m, "name")).adds += m.GetCounter().GetValue()
			}
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(stats)) {
		s := stats[name]
		out = append(out, fmt.Sprintf("%-26s reconciles %5.0f (success %5.0f, error %4.0f, requeue-after %5.0f) busy %6.1fs, queued %7.1fs, adds %5.0f",
			name, s.reconciles, s.results["success"], s.results["error"], s.results["requeue_after"], s.busy, s.queued, s.adds))
	}
	return out
}
