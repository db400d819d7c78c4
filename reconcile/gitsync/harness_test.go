package gitsync_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/internal/memguard"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/receiver"
)

func TestMain(m *testing.M) {
	policy.ServeSandboxIfAsked() // the sandbox of users' rules is this binary
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Run(m))
}

// manager is `olmsync run`'s manager (reconcile.NewManager) running for one test.
type manager struct {
	*reconcile.Manager
	// webhook is the receiver's base URL.
	webhook string
}

// managerOptions are the test's choices; the rest is fast intervals for a test.
type managerOptions struct {
	allowLocalSources bool
	cacheDir          string
	// config, when set, is the manager's connection (a benchmark counts its requests).
	config *rest.Config
	// concurrent is the number of Syncs reconciled at once (0: the default).
	concurrent int
	// logger, when set, is the manager's (a test reads what olmsync logs).
	logger logr.Logger
	// globalCatalogNamespace is the embedded OLM's (`olmsync run --global-catalog-namespace`).
	globalCatalogNamespace string
	// leaseNamespace, when set, turns leader election on with a Lease there, with the
	// short timings of leaseTimings.
	leaseNamespace string
	// policyTimeout is `olmsync run --policy-timeout` (0: the default).
	policyTimeout time.Duration
}

// leaseTimings are leader election's durations in the tests that take a lease: a deposed
// replica is replaced within seconds.
var leaseTimings = reconcile.Timings{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}

// startManager runs the Sync reconciler and the embedded OLM, as `olmsync run` does on a
// cluster without OLM, until the test ends, with intervals short enough for a test.
func startManager(t testing.TB, env *testenv.Env, o managerOptions) *manager {
	t.Helper()
	cfg := o.config
	if cfg == nil {
		cfg = rest.CopyConfig(env.Config)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := newManager(t, ctx, cfg, o)
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		olmtest.CheckStopped(t, "manager", <-done)
	})
	return m
}

// newManager builds the manager startManager runs (and the subprocess of a fault test).
func newManager(t testing.TB, ctx context.Context, cfg *rest.Config, o managerOptions) *manager {
	t.Helper()
	if o.cacheDir == "" {
		o.cacheDir = t.TempDir()
	}
	addr := testenv.FreeAddr(t)
	mgr, err := reconcile.NewManager(ctx, cfg, reconcile.Options{
		OLM:         olm.ModeEmbedded,
		OLMOptions:  olm.Options{RetryInterval: time.Second, GlobalCatalogNamespace: o.globalCatalogNamespace},
		MetricsAddr: "0", ProbeAddr: "0",
		WebhookAddr: addr,
		// Every request of a test comes from loopback: the receiver's tests hold the limit.
		Webhook:                 receiver.Options{RatePerMinute: -1},
		Logger:                  o.logger,
		LeaderElection:          o.leaseNamespace != "",
		LeaderElectionNamespace: o.leaseNamespace,
		LeaderElectionTimings:   leaseTimings,
		Sync: gitsync.Options{
			CacheDir:                o.cacheDir,
			AllowLocalSources:       o.allowLocalSources,
			RetryInterval:           time.Second,
			HealthPollInterval:      300 * time.Millisecond,
			CRDTimeout:              20 * time.Second,
			MaxConcurrentReconciles: o.concurrent,
			// What olmsync run builds with: a share of the default memory ceiling for each
			// worker, users' rules in a sandbox.
			Check: gitsync.BoundedChecks(check.Options{PolicyTimeout: o.policyTimeout}, memguard.DefaultLimit,
				cmp.Or(o.concurrent, gitsync.DefaultMaxConcurrentReconciles)),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &manager{Manager: mgr, webhook: "http://" + addr}
}

var nsCounter atomic.Int64

// uniqueNS is a namespace name no other test uses: envtest has no namespace controller,
// so a namespace is never really gone.
func uniqueNS(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%100000, nsCounter.Add(1))
}

// createNamespace creates the namespace the Syncs of a test live in.
func createNamespace(t testing.TB, env *testenv.Env, name string) {
	t.Helper()
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

// newSync creates a Sync of url in namespace ns, polled every second, pruning; edit
// changes its spec first. The Sync is deleted when the test ends, so that the managers of
// later tests do not reconcile it against a git server that is gone (one whose fetch hangs
// holds a manager's shutdown past its grace period).
func newSync(t testing.TB, env *testenv.Env, ns, name, url string, edit func(*olmsyncv1alpha1.SyncSpec)) *olmsyncv1alpha1.Sync {
	t.Helper()
	s := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: url, Interval: metav1.Duration{Duration: time.Second}},
			Prune:    true,
			Interval: metav1.Duration{Duration: time.Minute},
		},
	}
	if edit != nil {
		edit(&s.Spec)
	}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeSync(t, env, s) })
	return s
}

// removeSync deletes a Sync and waits until it is gone: a manager still running (its
// cleanup runs after the Sync's when the test started it first) finalizes it; without one
// the finalizer is taken off after a while.
func removeSync(t testing.TB, env *testenv.Env, s *olmsyncv1alpha1.Sync) {
	ctx := context.Background()
	if err := env.Client.Delete(ctx, s.DeepCopy()); client.IgnoreNotFound(err) != nil {
		t.Errorf("delete Sync %s/%s: %v", s.Namespace, s.Name, err)
		return
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := getSync(env, s); apierrors.IsNotFound(err) {
			return
		}
	}
	got, err := getSync(env, s)
	if err != nil {
		return
	}
	got.Finalizers = nil
	if err := env.Client.Update(ctx, got); client.IgnoreNotFound(err) != nil {
		t.Errorf("take the finalizer off Sync %s/%s: %v", s.Namespace, s.Name, err)
	}
}

// getSync reads a Sync.
func getSync(env *testenv.Env, s *olmsyncv1alpha1.Sync) (*olmsyncv1alpha1.Sync, error) {
	out := &olmsyncv1alpha1.Sync{}
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(s), out)
	return out, err
}

// waitReady waits until the Sync says Ready with the given status and reason, and
// returns it.
func waitReady(t testing.TB, env *testenv.Env, s *olmsyncv1alpha1.Sync, status metav1.ConditionStatus, reason string) *olmsyncv1alpha1.Sync {
	t.Helper()
	var got *olmsyncv1alpha1.Sync
	olmtest.Eventually(t, fmt.Sprintf("Sync %s Ready=%s %s", s.Name, status, reason), func() error {
		var err error
		if got, err = getSync(env, s); err != nil {
			return err
		}
		c := conditions.Get(got, olmsyncv1alpha1.ReadyCondition)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Ready is %+v", c)
		}
		return nil
	})
	return settled(t, env, got)
}

// appliedAt waits until the Sync is Ready at the commit, and returns it.
func appliedAt(t testing.TB, env *testenv.Env, s *olmsyncv1alpha1.Sync, commit string) *olmsyncv1alpha1.Sync {
	t.Helper()
	var got *olmsyncv1alpha1.Sync
	olmtest.Eventually(t, fmt.Sprintf("Sync %s Ready at %s", s.Name, commit), func() error {
		var err error
		if got, err = getSync(env, s); err != nil {
			return err
		}
		c := conditions.Get(got, olmsyncv1alpha1.ReadyCondition)
		if !strings.HasSuffix(got.Status.LastAppliedRevision, commit) || c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("revision %q, Ready %+v", got.Status.LastAppliedRevision, c)
		}
		return nil
	})
	return settled(t, env, got)
}

// settled re-reads a Sync until two reads 300 ms apart show the same resourceVersion, and
// returns the last. Flux's patch helper writes a reconcile's conditions and the rest of
// its status in two requests, conditions first: a Sync read between them shows the new
// Ready with the previous apps and inventory.
func settled(t testing.TB, env *testenv.Env, s *olmsyncv1alpha1.Sync) *olmsyncv1alpha1.Sync {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		got, err := getSync(env, s)
		if err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion == s.ResourceVersion {
			return got
		}
		s = got
	}
	return s
}

// object reads an object of the cluster; nil when it is not there.
func object(t testing.TB, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return u
}

var (
	configMapGVK     = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	secretGVK        = corev1.SchemeGroupVersion.WithKind("Secret")
	operatorGroupGVK = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1", Kind: "OperatorGroup"}
	catalogSourceGVK = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "CatalogSource"}
)

// syncEvents are the notes of the Events about a Sync.
func syncEvents(t testing.TB, env *testenv.Env, s *olmsyncv1alpha1.Sync) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(s.Namespace)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == olmsyncv1alpha1.SyncKind && e.Regarding.Name == s.Name {
			out = append(out, e.Type+" "+e.Reason+": "+e.Note)
		}
	}
	return out
}

// repository is a GitOps repository of two apps in namespace ns, as the placement rules
// want it: a cluster-scope app with the Namespace and its OperatorGroup, and the app
// "team" with a ConfigMap. olmsync.yaml makes ns the marketplace namespace, so that a
// test's CatalogSource can sit beside its Subscription.
func repository(ns string) map[string]string {
	return map[string]string{
		"olmsync.yaml": fmt.Sprintf(`apps:
- {name: cluster-scope, path: cluster-scope}
- {name: team, path: team, namespace: %[1]s}
policy:
  marketplaceNamespace: %[1]s
  operatorGroups: []
`, ns),
		"cluster-scope/namespace.yaml":     fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns),
		"cluster-scope/operatorgroup.yaml": fmt.Sprintf("apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  namespace: %[1]s\nspec:\n  targetNamespaces: [%[1]s]\n", ns),
		"team/configmap.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n",
	}
}

// with returns files with more files added (an empty content removes one).
func with(files map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		out[k] = v
	}
	for k, v := range more {
		if v == "" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}
