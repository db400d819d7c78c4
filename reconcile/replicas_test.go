package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// writes records the writes one manager's requests make, by URL path, leaving out the
// lease's own: what this replica did, as opposed to what it only looked at.
type writes struct {
	mu    sync.Mutex
	paths map[string]int
	// cut, when set, fails every request, the lease's too: the replica is cut off from the
	// API server (a partition, or a crash that released nothing).
	cut atomic.Bool
}

func (w *writes) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if w.cut.Load() {
				return nil, errors.New("cut off from the API server")
			}
			resp, err := rt.RoundTrip(r)
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				return resp, err
			}
			if err == nil && resp.StatusCode < 300 && !strings.Contains(r.URL.Path, "/leases") {
				w.mu.Lock()
				w.paths[r.URL.Path]++
				w.mu.Unlock()
			}
			return resp, err
		})
	})
	return cfg
}

// count is the number of writes to paths with the prefix.
func (w *writes) count(prefix string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for p, c := range w.paths {
		if strings.HasPrefix(p, prefix) {
			n += c
		}
	}
	return n
}

// replica is one manager of a test, as one replica of `olmsync run` would be.
type replica struct {
	*Manager
	writes *writes
	stop   context.CancelFunc
	done   chan error
}

// Stop stops the replica and waits for it to end (releasing its lease).
func (r *replica) Stop(t *testing.T) {
	t.Helper()
	if r.done == nil {
		return
	}
	r.stop()
	olmtest.CheckStopped(t, "replica", <-r.done)
	r.done = nil
}

// testTimings are lease timings short enough for a test and long enough for -race on a
// busy machine: a replica that stops releases its lease, and the other takes it at its
// next try, a retry period later.
var testTimings = Timings{LeaseDuration: 8 * time.Second, RenewDeadline: 6 * time.Second, RetryPeriod: time.Second}

func startReplica(t *testing.T, env *testenv.Env, leaseNS string, mode olm.Mode, shard string) *replica {
	t.Helper()
	w := &writes{paths: map[string]int{}}
	var sel labels.Selector
	if shard != "" {
		var err error
		if sel, err = labels.Parse(shard); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m, err := NewManager(ctx, w.wrap(env.Config), Options{
		OLM: mode, OLMOptions: olm.Options{RetryInterval: time.Second},
		MetricsAddr: "0", ProbeAddr: "0", WebhookAddr: "0",
		LeaderElection: true, LeaderElectionNamespace: leaseNS, LeaderElectionTimings: testTimings,
		WatchLabelSelector: sel,
		Sync:               gitsync.Options{CacheDir: t.TempDir(), AllowLocalSources: true, RetryInterval: time.Second, HealthPollInterval: 300 * time.Millisecond},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &replica{Manager: m, writes: w, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- m.Start(ctx) }()
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// elected waits until the replica leads.
func (r *replica) elected(t *testing.T) {
	t.Helper()
	select {
	case <-r.Elected():
	case err := <-r.done:
		t.Fatalf("the replica ended before it led: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("the replica did not lead")
	}
}

// newSyncOf creates a Sync of a repository holding one ConfigMap in ns.
func newSyncOf(t *testing.T, env *testenv.Env, ns, name string, labels map[string]string) *olmsyncv1alpha1.Sync {
	t.Helper()
	up := gittest.NewUpstream(t, map[string]string{
		"configmap.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  from: %s\n", name, ns, name),
	})
	s := &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: up.FileURL(), Interval: metav1.Duration{Duration: time.Minute}},
			Prune:    true,
			Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whichever replica still runs finalizes it; without one, the finalizer goes.
		got := &olmsyncv1alpha1.Sync{}
		if env.Client.Get(context.Background(), client.ObjectKeyFromObject(s), got) == nil && len(got.Finalizers) > 0 {
			got.Finalizers = nil
			_ = env.Client.Update(context.Background(), got)
		}
		_ = env.Client.Delete(context.Background(), s)
	})
	return s
}

// ready waits until the Sync is Ready with its request (if any) handled.
func ready(t *testing.T, env *testenv.Env, s *olmsyncv1alpha1.Sync, request string) {
	t.Helper()
	olmtest.Eventually(t, "Sync "+s.Name+" Ready", func() error {
		got := &olmsyncv1alpha1.Sync{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(s), got); err != nil {
			return err
		}
		c := conditions.Get(got, olmsyncv1alpha1.ReadyCondition)
		if c == nil || c.Status != metav1.ConditionTrue || got.Status.LastHandledReconcileAt != request {
			return fmt.Errorf("Ready %+v, lastHandledReconcileAt %q", c, got.Status.LastHandledReconcileAt)
		}
		return nil
	})
}

// requestReconcile sets the Sync's request annotation, as `olmsync reconcile sync` does.
func requestReconcile(t *testing.T, env *testenv.Env, s *olmsyncv1alpha1.Sync) string {
	t.Helper()
	at := time.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, olmsyncv1alpha1.ReconcileRequestAnnotation, at)
	if err := env.Client.Patch(context.Background(), s.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
	return at
}

func syncPath(s *olmsyncv1alpha1.Sync) string {
	return fmt.Sprintf("/apis/olmsync.dev/v1alpha1/namespaces/%s/syncs/%s", s.Namespace, s.Name)
}

func holder(t *testing.T, env *testenv.Env, ns, name string) (string, time.Time) {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, l); err != nil || l.Spec.HolderIdentity == nil {
		return "", time.Time{}
	}
	var acquired time.Time
	if l.Spec.AcquireTime != nil {
		acquired = l.Spec.AcquireTime.Time
	}
	return *l.Spec.HolderIdentity, acquired
}

// TestLeaderTakesOver: two replicas on one cluster, leader election on. Only the leader
// reconciles — the other writes nothing at all, not even to the Sync it sees — and when
// the leader stops, the other takes the lease it released, without waiting for it to
// expire, and reconciles from then on.
func TestLeaderTakesOver(t *testing.T) {
	env := testenv.Get(t)
	leaseNS := olmtest.NewNamespace(t, env, "lease")
	ns := olmtest.NewNamespace(t, env, "replicas")

	a := startReplica(t, env, leaseNS, olm.ModeEmbedded, "")
	a.elected(t)
	leaderA, _ := holder(t, env, leaseNS, olm.LeaderElectionID)
	b := startReplica(t, env, leaseNS, olm.ModeEmbedded, "")

	s := newSyncOf(t, env, ns, "app", nil)
	ready(t, env, s, "")
	if n := a.writes.count(syncPath(s)); n == 0 {
		t.Error("the leader did not write the Sync it reconciled")
	}
	select {
	case <-b.Elected():
		t.Fatal("the second replica leads beside the first")
	default:
	}
	if n := b.writes.count("/"); n != 0 {
		t.Errorf("the replica that does not lead made %d writes: %v", n, b.writes.paths)
	}

	stopped := time.Now()
	a.Stop(t)
	// The stopped leader released its lease on the way out: once Stop has returned the lease
	// no longer names it (it would until the lease expired, had it not), so the other takes
	// it at its next try.
	if h, _ := holder(t, env, leaseNS, olm.LeaderElectionID); h == leaderA {
		t.Errorf("the lease still names the stopped leader %q: it was not released", leaderA)
	}
	b.elected(t)
	leaderB, acquired := holder(t, env, leaseNS, olm.LeaderElectionID)
	if leaderB == "" || leaderB == leaderA {
		t.Fatalf("lease holder %q after the leader %q stopped", leaderB, leaderA)
	}
	took := acquired.Sub(stopped)
	t.Logf("the second replica took the lease %s after the leader was told to stop (lease duration %s, retry period %s)",
		took.Round(time.Millisecond), testTimings.LeaseDuration, testTimings.RetryPeriod)
	at := requestReconcile(t, env, s)
	ready(t, env, s, at)
	if n := b.writes.count(syncPath(s)); n == 0 {
		t.Error("the new leader did not reconcile the Sync")
	}
}

// TestShardsSplitSyncs: two deployments with different --watch-label-selector shards run
// side by side, each leading its own shard's lease; each Sync is reconciled by the one
// whose selector matches it, a Sync neither matches by none, and the embedded OLM runs in
// exactly one. A Sync relabelled into the other shard is reconciled by that shard from
// then on.
func TestShardsSplitSyncs(t *testing.T) {
	env := testenv.Get(t)
	leaseNS := olmtest.NewNamespace(t, env, "lease")
	ns := olmtest.NewNamespace(t, env, "shards")
	const key = "sharding.olmsync.dev/key"

	unsharded := newSyncOf(t, env, ns, "unsharded", nil)
	one := startReplica(t, env, leaseNS, olm.ModeEmbedded, key+" in (shard1)")
	two := startReplica(t, env, leaseNS, olm.ModeExternal, key+" in (shard2)")
	one.elected(t)
	two.elected(t)
	if LeaseName(nil) == LeaseName(labels.SelectorFromSet(labels.Set{key: "shard1"})) {
		t.Error("a shard takes the lease of the whole cluster")
	}
	if !one.EmbeddedOLM || two.EmbeddedOLM {
		t.Errorf("embedded OLM in shard1 %t, in shard2 %t; want only shard1", one.EmbeddedOLM, two.EmbeddedOLM)
	}

	s1 := newSyncOf(t, env, ns, "s1", map[string]string{key: "shard1"})
	s2 := newSyncOf(t, env, ns, "s2", map[string]string{key: "shard2"})
	ready(t, env, s1, "")
	ready(t, env, s2, "")
	for _, tc := range []struct {
		r    *replica
		name string
		s    *olmsyncv1alpha1.Sync
		want bool
	}{
		{one, "shard1", s1, true}, {one, "shard1", s2, false}, {one, "shard1", unsharded, false},
		{two, "shard2", s1, false}, {two, "shard2", s2, true}, {two, "shard2", unsharded, false},
	} {
		if n := tc.r.writes.count(syncPath(tc.s)); (n > 0) != tc.want {
			t.Errorf("%s wrote Sync %s %d times, want writes: %t", tc.name, tc.s.Name, n, tc.want)
		}
	}
	got := &olmsyncv1alpha1.Sync{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(unsharded), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Finalizers) > 0 || len(got.Status.Conditions) > 0 {
		t.Errorf("the Sync no shard selects was reconciled: finalizers %v, conditions %v", got.Finalizers, got.Status.Conditions)
	}
	if n := two.writes.count("/apis/operators.coreos.com/"); n != 0 {
		t.Errorf("the shard without the embedded OLM wrote OLM's objects %d times", n)
	}

	// Relabelled into shard2: shard2 reconciles it from then on, shard1 no more.
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"shard2"}}}`, key)
	if err := env.Client.Patch(context.Background(), s1.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
	// Its status is as shard1 left it, so shard2's first reconcile writes nothing; a
	// request makes the next one write.
	before, beforeTwo := one.writes.count(syncPath(s1)), two.writes.count(syncPath(s1))
	at := requestReconcile(t, env, s1)
	ready(t, env, s1, at)
	if after := one.writes.count(syncPath(s1)); after != before {
		t.Errorf("shard1 still wrote the Sync relabelled into shard2 (%d writes, %d before)", after, before)
	}
	if after := two.writes.count(syncPath(s1)); after == beforeTwo {
		t.Error("shard2 did not reconcile the Sync relabelled into it")
	}
}

// TestLeaderCutOff: the leader is cut off from the API server — it can neither renew nor
// release its lease, as when it crashed or a partition isolates it. The other replica takes
// the lease once it expired, and reconciles; the cut-off leader ends with ErrLeaseLost.
func TestLeaderCutOff(t *testing.T) {
	env := testenv.Get(t)
	leaseNS := olmtest.NewNamespace(t, env, "lease")
	ns := olmtest.NewNamespace(t, env, "cutoff")

	a := startReplica(t, env, leaseNS, olm.ModeEmbedded, "")
	a.elected(t)
	leaderA, _ := holder(t, env, leaseNS, olm.LeaderElectionID)
	b := startReplica(t, env, leaseNS, olm.ModeEmbedded, "")
	s := newSyncOf(t, env, ns, "app", nil)
	ready(t, env, s, "")

	a.writes.cut.Store(true)
	cut := time.Now()
	var ended time.Time
	select {
	case err := <-a.done:
		ended = time.Now()
		if !errors.Is(err, ErrLeaseLost) {
			t.Errorf("the cut-off leader ended with %v, want ErrLeaseLost", err)
		}
		a.done = nil
	case <-time.After(90 * time.Second):
		t.Fatal("the cut-off leader did not stop")
	}
	b.elected(t)
	leaderB, acquired := holder(t, env, leaseNS, olm.LeaderElectionID)
	if leaderB == "" || leaderB == leaderA {
		t.Fatalf("lease holder %q after the leader %q was cut off", leaderB, leaderA)
	}
	t.Logf("cut off, the leader ended %s later (renew deadline %s); the other took the lease %s after the cut (lease duration %s)",
		ended.Sub(cut).Round(time.Millisecond), testTimings.RenewDeadline, acquired.Sub(cut).Round(time.Millisecond), testTimings.LeaseDuration)
	at := requestReconcile(t, env, s)
	ready(t, env, s, at)
	if n := b.writes.count(syncPath(s)); n == 0 {
		t.Error("the new leader did not reconcile the Sync")
	}
}
