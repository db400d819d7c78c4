package gitsync

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/olmsync/olmsync/sources"
)

// Defaults of Options.
const (
	// DefaultMaxConcurrentFetches is how many fetches may start at once unless Options say
	// otherwise. A fetch mostly waits on the network; what it holds is a connection, and
	// the tree it read until its reconcile takes it.
	DefaultMaxConcurrentFetches = 16
)

// slowFetch is how long a fetch may hold a slot: one that runs longer (a server that
// accepts and never answers, a first clone of a large repository) gives it up and goes on,
// and its Sync's next fetch waits for the slow lane.
const slowFetch = 10 * time.Second

// fetches runs the Syncs' fetches off the reconcile workers, so that a git server that
// accepts connections and never answers holds no worker: the other Syncs' reconciles go
// on. A reconcile that finds no outcome of its fetch starts one and ends; the fetch, once
// done, puts the Sync back on the controller's queue, and that reconcile takes the outcome
// and goes on with it (two passes where there was one, the second as soon as a worker is
// free). As Flux's source-controller fetches for its kustomize-controller, with a pool of
// its own.
//
// What bounds them, so that hanging servers cost the others' fetches nothing, or at worst
// slowFetch once:
//   - one fetch at a time per Sync, and per repository (sources locks a repository's cache
//     for a fetch, so fetches of one URL wait for each other): they wait for the repository
//     before anything else;
//   - a quarter of the slots per server (host and port), held for the whole fetch: Syncs
//     of one server that hangs, however many, never hold more;
//   - cap(slots) fetches start at once, and each gives its slot up after slowFetch: a slot
//     is never held longer, whatever spec.source.timeout says, so a fetch waits for one at
//     most slowFetch, even when new Syncs of many hanging servers all start together;
//   - a Sync whose last fetch took slowFetch or more, or ran out its timeout, fetches in the
//     slow lane (a quarter as many slots, held for the whole fetch), so that hanging servers
//     are not tried in the others' slots again.
type fetches struct {
	slots    chan struct{}
	slowLane chan struct{}
	// perServer is how many fetches of one server may run at once.
	perServer int
	// slowAfter is slowFetch (shorter in a test).
	slowAfter time.Duration

	mu      sync.Mutex
	jobs    map[types.NamespacedName]*fetchJob
	slow    map[types.NamespacedName]bool
	repos   map[string]*semaphore
	servers map[string]*semaphore
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]

	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// fetchWant is what a reconcile asks a fetch for: an outcome for another generation of the
// Sync, or from before a requested reconcile, is not taken.
type fetchWant struct {
	uid         types.UID
	generation  int64
	requestedAt string
}

// fetchJob is one Sync's fetch, under way or done.
type fetchJob struct {
	want   fetchWant
	cancel context.CancelFunc
	done   bool
	out    fetchOutcome
}

// fetchOutcome is what a fetch brings a reconcile.
type fetchOutcome struct {
	// tree is what was fetched; nil when err is set.
	tree *sources.Tree
	err  error
	took time.Duration
	// last is the last applied revision read back from the cache after a failed fetch,
	// or lastErr why it could not be.
	last    *sources.Tree
	lastErr error
	// from and relation: how tree's revision relates to from, the revision applied when
	// the fetch started (relationErr when that could not be told).
	from        string
	relation    sources.Relation
	relationErr error
	// timedOut: the fetch ran out its timeout.
	timedOut bool
	// slow: the fetch took slowFetch or more, or ran out its timeout.
	slow bool
}

// fetchFunc does a fetch's work once it has its repository and a slot; the context
// ends when the Sync is gone, asks for another fetch, or olmsync stops.
type fetchFunc func(ctx context.Context) fetchOutcome

func newFetches(maxConcurrent int) *fetches {
	if maxConcurrent <= 0 {
		maxConcurrent = DefaultMaxConcurrentFetches
	}
	ctx, stop := context.WithCancel(context.Background())
	return &fetches{
		slots:     make(chan struct{}, maxConcurrent),
		slowLane:  make(chan struct{}, max(maxConcurrent/4, 1)),
		perServer: max(maxConcurrent/4, 1),
		slowAfter: slowFetch,
		jobs:      map[types.NamespacedName]*fetchJob{},
		slow:      map[types.NamespacedName]bool{},
		repos:     map[string]*semaphore{},
		servers:   map[string]*semaphore{},
		ctx:       ctx, stop: stop,
	}
}

// Start is the fetches' life in the manager: when the manager stops, every fetch under
// way is cancelled and waited for.
func (f *fetches) Start(ctx context.Context) error {
	<-ctx.Done()
	f.mu.Lock() // take starts no fetch from here on: the wait below races with none
	f.stop()
	f.mu.Unlock()
	f.wg.Wait()
	return nil
}

// NeedLeaderElection is false: a fetch starts only from a reconcile, and those run only
// on the leader.
func (f *fetches) NeedLeaderElection() bool { return false }

// source hands the controller's queue to the fetches, which put a Sync back on it when its
// fetch ends.
func (f *fetches) source(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = q
	return nil
}

// take returns the outcome of the Sync's fetch for want, and forgets it. Without one it
// returns false, and a fetch for want is under way: the one already running, or one
// started now by run (any other of the Sync's is cancelled) — unless the fetches have
// stopped, when none starts. repo names the repository, for which fetches wait for each
// other, and server its server.
func (f *fetches) take(k types.NamespacedName, want fetchWant, repo, server string, run fetchFunc) (fetchOutcome, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx.Err() != nil {
		// Stopped (olmsync is stopping): a fetch started now would be cancelled at once,
		// and adding it to what Start waits for would race with the wait.
		return fetchOutcome{}, false
	}
	if j := f.jobs[k]; j != nil {
		switch {
		case j.want == want && j.done:
			delete(f.jobs, k)
			return j.out, true
		case j.want == want:
			return fetchOutcome{}, false
		}
		j.cancel() // for a generation or a request gone by
	}
	ctx, cancel := context.WithCancel(f.ctx)
	j := &fetchJob{want: want, cancel: cancel}
	f.jobs[k] = j
	slow := f.slow[k]
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer cancel()
		out, ok := f.run(ctx, repo, server, slow, run)
		f.finish(k, j, out, ok)
	}()
	return fetchOutcome{}, false
}

// run waits for the repository, its server and a slot (of the slow lane for a slow
// Sync), then does the fetch, giving a slot of the others up after slowAfter; false when
// the context ended first.
func (f *fetches) run(ctx context.Context, repo, server string, slow bool, run fetchFunc) (fetchOutcome, bool) {
	lane := f.slots
	if slow {
		lane = f.slowLane
	}
	release, err := f.acquire(ctx, repo, server, lane)
	if err != nil {
		return fetchOutcome{}, false
	}
	defer release()
	var giveUp sync.Once
	leave := func() { giveUp.Do(func() { <-lane }) }
	defer leave()
	if !slow {
		t := time.AfterFunc(f.slowAfter, leave)
		defer t.Stop()
	}
	start := time.Now()
	out := run(ctx)
	out.slow = out.timedOut || time.Since(start) >= f.slowAfter
	return out, ctx.Err() == nil
}

// semaphore is shared by the fetches of one repository or one server; refs counts those
// that hold or wait for it, so that it is dropped with the last.
type semaphore struct {
	ch   chan struct{}
	refs int
}

// named is the semaphore of name in m, of size n, counted as used once more.
func (f *fetches) named(m map[string]*semaphore, name string, n int) *semaphore {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := m[name]
	if s == nil {
		s = &semaphore{ch: make(chan struct{}, n)}
		m[name] = s
	}
	s.refs++
	return s
}

// unname counts the semaphore of name in m as used once less, and drops it with the last.
func (f *fetches) unname(m map[string]*semaphore, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := m[name]; s != nil {
		if s.refs--; s.refs == 0 {
			delete(m, name)
		}
	}
}

// acquire takes the repository, then a slot of its server, then a slot of lane: what is
// scarcer is waited for holding nothing that another fetch needs. The returned func gives
// the repository and the server back; the lane's slot is the caller's to give back.
func (f *fetches) acquire(ctx context.Context, repo, server string, lane chan struct{}) (func(), error) {
	r := f.named(f.repos, repo, 1)
	h := f.named(f.servers, server, f.perServer)
	var held []chan struct{}
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			<-held[i]
		}
		f.unname(f.repos, repo)
		f.unname(f.servers, server)
	}
	for _, s := range []chan struct{}{r.ch, h.ch, lane} {
		select {
		case s <- struct{}{}:
			if s != lane {
				held = append(held, s)
			}
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
	}
	return release, nil
}

// finish records a fetch's outcome and wakes its Sync, unless the fetch was cancelled or
// another took its place.
func (f *fetches) finish(k types.NamespacedName, j *fetchJob, out fetchOutcome, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !ok || f.jobs[k] != j {
		return
	}
	j.done, j.out = true, out
	if out.slow {
		f.slow[k] = true
	} else {
		delete(f.slow, k)
	}
	if f.queue != nil {
		f.queue.Add(reconcile.Request{NamespacedName: k})
	}
}

// forget cancels the Sync's fetch and drops its outcome: the Sync is gone, suspended, or
// another shard's.
func (f *fetches) forget(k types.NamespacedName) {
	if f == nil {
		return // a Reconciler without SetupWithManager fetches on its caller's goroutine
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if j := f.jobs[k]; j != nil {
		j.cancel()
		delete(f.jobs, k)
	}
	delete(f.slow, k)
}

// timedOut reports whether a fetch error is its context's deadline.
func timedOut(ctx context.Context, err error) bool {
	return err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
}
