package olmtest

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
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
	stop     context.CancelFunc
	done     chan error
}

// Stop stops the manager and waits for it (a test's Cleanup also does).
func (m *Manager) Stop(tb testing.TB) {
	tb.Helper()
	if m.done == nil {
		return
	}
	m.stop()
	if err := <-m.done; err != nil {
		tb.Errorf("manager stopped with: %v", err)
	}
	m.done = nil
}

// StartManager starts a manager running olm.SetupWithManager(opts) and waits until it leads.
func StartManager(tb testing.TB, env *testenv.Env, opts olm.Options) *Manager {
	tb.Helper()
	EnsureNamespace(tb, env, LeaseNamespace)
	requests := &atomic.Int64{}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000 // the default 20/30 would measure client-side throttling
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			requests.Add(1)
			return rt.RoundTrip(r)
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
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
		// As olmsync run's manager (reconcile.NewManager) caches objects.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
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
	m := &Manager{Requests: requests, stop: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	tb.Cleanup(func() { m.Stop(tb) })
	select {
	case <-mgr.Elected():
	case <-time.After(60 * time.Second):
		tb.Fatal("the manager did not become leader")
	}
	return m
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

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
