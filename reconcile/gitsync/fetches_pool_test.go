package gitsync

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// hanging is a fetch that never ends until it is cancelled, as one of a server that
// accepts and never answers; running counts those under way.
func hanging(running *atomic.Int64) fetchFunc {
	return func(ctx context.Context) fetchOutcome {
		running.Add(1)
		defer running.Add(-1)
		<-ctx.Done()
		return fetchOutcome{err: ctx.Err()}
	}
}

// TestFetchesBoundHangingServers: the fetch pool's bounds, on fetches that hang until they
// are cancelled. Of 8 Syncs of one server, 4 (a quarter of 16 slots) fetch at once; of 20
// Syncs of 20 servers whose last fetch was slow, 4 (the slow lane); a Sync of another
// server still finds a slot at once, and is put back on the queue when its fetch is done,
// where the next take hands it its outcome. A Sync's fetch for a new generation cancels
// the old one; forgetting a Sync cancels its fetch.
func TestFetchesBoundHangingServers(t *testing.T) {
	f := newFetches(16)
	f.slowAfter = time.Hour // no fetch gives its slot up here: see TestFetchesGiveSlotsUp
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if err := f.source(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	go func() { _ = f.Start(ctx); close(stopped) }()

	var oneServer, suspects atomic.Int64
	for i := range 8 {
		k := types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("hung-%d", i)}
		if _, ok := f.take(k, fetchWant{generation: 1}, fmt.Sprintf("http://hung/r%d.git", i), "hung:80", hanging(&oneServer)); ok {
			t.Fatal("an outcome before any fetch ran")
		}
	}
	for i := range 20 {
		k := types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("slow-%d", i)}
		f.mu.Lock()
		f.slow[k] = true // its last fetch was slow
		f.mu.Unlock()
		f.take(k, fetchWant{generation: 1}, fmt.Sprintf("http://slow%d/r.git", i), fmt.Sprintf("slow%d:80", i), hanging(&suspects))
	}
	waitFor(t, "the hanging fetches to take their slots", func() bool { return oneServer.Load() == 4 && suspects.Load() == 4 })
	time.Sleep(100 * time.Millisecond)
	if oneServer.Load() != 4 || suspects.Load() != 4 {
		t.Fatalf("%d fetches of one server and %d slow ones running, want 4 and 4", oneServer.Load(), suspects.Load())
	}

	healthy := types.NamespacedName{Namespace: "ns", Name: "healthy"}
	want := fetchWant{generation: 3, requestedAt: "now"}
	fetched := func(context.Context) fetchOutcome { return fetchOutcome{took: time.Millisecond} }
	if _, ok := f.take(healthy, want, "http://good/r.git", "good:80", fetched); ok {
		t.Fatal("an outcome before the fetch ran")
	}
	done := make(chan reconcile.Request)
	go func() {
		item, _ := q.Get()
		done <- item
	}()
	select {
	case item := <-done:
		if item.NamespacedName != healthy {
			t.Fatalf("queued %v, want %v", item, healthy)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the healthy Sync's fetch did not end: it found no slot")
	}
	if _, ok := f.take(healthy, fetchWant{generation: 3}, "http://good/r.git", "good:80", fetched); ok {
		t.Error("an outcome handed to a reconcile of another request")
	}
	// That take started a fetch for its own request; the first outcome is gone with it.
	waitFor(t, "the fetch of the new request", func() bool {
		_, ok := f.take(healthy, fetchWant{generation: 3}, "http://good/r.git", "good:80", fetched)
		return ok
	})
	if oneServer.Load() != 4 || suspects.Load() != 4 {
		t.Errorf("%d fetches of one server and %d slow ones running, want 4 and 4", oneServer.Load(), suspects.Load())
	}

	for i := range 6 {
		f.forget(types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("hung-%d", i)})
	}
	waitFor(t, "the forgotten fetches to end, and the 2 others to run", func() bool { return oneServer.Load() == 2 })
	stop()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the fetches did not stop with the manager")
	}
	if n := oneServer.Load() + suspects.Load(); n != 0 {
		t.Errorf("%d fetches still running after the stop", n)
	}
}

// TestFetchesGiveSlotsUp: a fetch gives its slot up after slowAfter and goes on, so that 16
// Syncs of 16 new servers that all hang (a tenant's, with spec.source.timeout of hours)
// hold the 16 slots no longer than that: another Sync's fetch then runs, while theirs still
// do. A fetch that took that long makes its Sync's next one wait for the slow lane.
func TestFetchesGiveSlotsUp(t *testing.T) {
	f := newFetches(16)
	f.slowAfter = 300 * time.Millisecond
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	_ = f.source(context.Background(), q)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = f.Start(ctx) }()

	var hung atomic.Int64
	for i := range 16 {
		k := types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("hung-%d", i)}
		f.take(k, fetchWant{generation: 1}, fmt.Sprintf("http://hung%d/r.git", i), fmt.Sprintf("hung%d:80", i), hanging(&hung))
	}
	waitFor(t, "16 hanging fetches", func() bool { return hung.Load() == 16 })
	healthy := types.NamespacedName{Namespace: "ns", Name: "healthy"}
	started := time.Now()
	slowly := func(context.Context) fetchOutcome { time.Sleep(400 * time.Millisecond); return fetchOutcome{} }
	f.take(healthy, fetchWant{generation: 1}, "http://good/r.git", "good:80", slowly)
	done := make(chan reconcile.Request)
	go func() {
		item, _ := q.Get()
		done <- item
	}()
	select {
	case item := <-done:
		if item.NamespacedName != healthy {
			t.Fatalf("queued %v, want %v", item, healthy)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the fetch found no slot: the hanging fetches kept theirs")
	}
	t.Logf("beside 16 hanging fetches holding every slot, another fetch of 400 ms ended after %s", time.Since(started).Round(time.Millisecond))
	if n := hung.Load(); n != 16 {
		t.Errorf("%d hanging fetches still running, want 16: giving a slot up must not end the fetch", n)
	}
	if _, ok := f.take(healthy, fetchWant{generation: 1}, "http://good/r.git", "good:80", slowly); !ok {
		t.Fatal("no outcome after the Sync was queued")
	}
	f.mu.Lock()
	slow := f.slow[healthy]
	f.mu.Unlock()
	if !slow {
		t.Error("a fetch that took longer than slowAfter did not make its Sync slow")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited 30 s for %s", what)
}

// TestFetchesStopWhileTaken: the manager stopping the fetches (Start's context ends, and
// Start waits for the fetches under way) while reconciles still ask for fetches. A fetch
// asked for once the fetches stop is not started — it would be cancelled at once, and
// starting it raced with the wait (the race detector found it in CI) — and every fetch
// started is waited for. Run it under -race.
func TestFetchesStopWhileTaken(t *testing.T) {
	for round := range 50 {
		f := newFetches(16)
		ctx, stop := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { _ = f.Start(ctx); close(stopped) }()
		var running atomic.Int64
		taking := make(chan struct{})
		go func() {
			defer close(taking)
			for i := range 200 {
				k := types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("s-%d", i)}
				f.take(k, fetchWant{generation: 1}, fmt.Sprintf("http://h/r%d.git", i), "h:80", hanging(&running))
			}
		}()
		if round%2 == 0 {
			time.Sleep(time.Duration(round) * 10 * time.Microsecond)
		}
		stop()
		<-stopped
		<-taking
		if n := running.Load(); n != 0 {
			t.Fatalf("round %d: %d fetches still running after the fetches stopped", round, n)
		}
		k := types.NamespacedName{Namespace: "ns", Name: "late"}
		if _, ok := f.take(k, fetchWant{generation: 1}, "http://h/late.git", "h:80", hanging(&running)); ok {
			t.Fatal("an outcome for a fetch asked for after the fetches stopped")
		}
		f.mu.Lock()
		started := f.jobs[k] != nil
		f.mu.Unlock()
		if started {
			t.Fatal("a fetch was started after the fetches stopped")
		}
	}
}
