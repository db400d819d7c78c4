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
	// DefaultMaxConcurrentFetches is how many fetches run at once unless Options say
	// otherwise. A fetch mostly waits on the network; what it holds is a connection, and
	// the tree it read until its reconcile takes it.
	DefaultMaxConcurrentFetches = 16
)

// fetches runs the Syncs' fetches off the reconcile workers, so that a git server that
// accepts connections and never answers holds a fetch slot for its timeout, and never a
// worker: the other Syncs' reconciles go on. A reconcile that finds no outcome of its
// fetch starts one and ends; the fetch, once done, puts the Sync back on the controller's
// queue, and that reconcile takes the outcome and goes on with it (two passes where there
// was one, the second as soon as a worker is free). As Flux's source-controller fetches
// for its kustomize-controller, with a pool of its own.
//
// What bounds them:
//   - one fetch at a time per Sync, and per repository (sources locks a repository's cache
//     for a fetch, so fetches of one URL wait for each other): they wait for the repository
//     before they take a slot;
//   - at most cap(slots) fetches at once, and a quarter of them per server (host and port):
//     Syncs of one server that hangs, however many, hold a quarter of the slots from their
//     first fetch;
//   - a Sync whose last fetch ran out its timeout (a server that accepts and never answers,
//     or is that slow) takes a slot of the suspect lane, a quarter of the slots, first: once
//     each has timed out once, stalled servers, however many, hold a quarter of the slots,
//     and the others' fetches find one at once.
type fetches struct {
	slots   chan struct{}
	suspect chan struct{}
	// perServer is how many slots the fetches of one server may hold.
	perServer int

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
		suspect:   make(chan struct{}, max(maxConcurrent/4, 1)),
		perServer: max(maxConcurrent/4, 1),
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
	f.stop()
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
// started now by run (any other of the Sync's is cancelled). repo names the repository,
// for which fetches wait for each other, and server its server.
func (f *fetches) take(k types.NamespacedName, want fetchWant, repo, server string, run fetchFunc) (fetchOutcome, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
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
	suspect := f.slow[k]
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer cancel()
		out, ok := f.run(ctx, repo, server, suspect, run)
		f.finish(k, j, out, ok)
	}()
	return fetchOutcome{}, false
}

// run waits for the repository and a slot, then does the fetch; false when the context
// ended first.
func (f *fetches) run(ctx context.Context, repo, server string, suspect bool, run fetchFunc) (fetchOutcome, bool) {
	release, err := f.acquire(ctx, repo, server, suspect)
	if err != nil {
		return fetchOutcome{}, false
	}
	defer release()
	out := run(ctx)
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

// acquire takes the repository, then a slot of its server, then (for a suspect Sync) a
// slot of the suspect lane, then a slot: what is scarcer is waited for holding nothing
// that another fetch needs.
func (f *fetches) acquire(ctx context.Context, repo, server string, suspect bool) (func(), error) {
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
	sems := []chan struct{}{r.ch, h.ch, f.slots}
	if suspect {
		sems = []chan struct{}{r.ch, h.ch, f.suspect, f.slots}
	}
	for _, s := range sems {
		select {
		case s <- struct{}{}:
			held = append(held, s)
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
	if out.timedOut {
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
