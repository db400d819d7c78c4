package olm_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/olmsync/olmsync/reconcile/olm"
)

// TestShutdownWithBusyQueues stops a controller while twenty workers take requests as fast as
// twenty sources add them, round after round, and fails on the first round whose controller
// does not stop: a manager would wait out its grace period and end with an error. It runs the
// configuration of every controller olmsync starts (ControllerConfig: controller-runtime's
// priority queue). With controller-runtime v0.24.1 the priority queue's workers stayed blocked
// within the first rounds (kubernetes-sigs/controller-runtime#3538) and ControllerConfig turned
// it off; since v0.25 (#3540) it stops in all 100.
func TestShutdownWithBusyQueues(t *testing.T) {
	const rounds, stopWithin = 100, 10 * time.Second
	cfg := olm.ControllerConfig()
	if !ptr.Deref(cfg.UsePriorityQueue, true) {
		t.Fatal("ControllerConfig turns the priority queue off: this test no longer runs the queue the controllers take")
	}
	for round := range rounds {
		if !stopsWithin(t, cfg, stopWithin) {
			t.Fatalf("round %d: the controller's workers did not stop within %s (controller-runtime#3538 again?)", round, stopWithin)
		}
	}
}

// stopsWithin starts a controller of cfg with twenty workers fed by twenty busy sources,
// stops it after 10 ms, and reports whether its Start returned — its workers all ended —
// within d. A controller that does not is left behind, blocked.
func stopsWithin(t *testing.T, cfg config.Controller, d time.Duration) bool {
	t.Helper()
	opts := controller.TypedOptions[reconcile.Request]{
		MaxConcurrentReconciles: 20,
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		}),
	}
	opts.DefaultFromConfig(cfg)
	c, err := controller.NewTypedUnmanaged[reconcile.Request]("shutdown", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(flood{sources: 20}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("controller: %v", err)
		}
		return true
	case <-time.After(d):
		return false
	}
}

// flood is a source that adds requests for random names from as many goroutines as it has
// sources, until its context ends.
type flood struct{ sources int }

func (f flood) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	for range f.sources {
		go func() {
			for ctx.Err() == nil {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: strconv.Itoa(rand.IntN(1000))}})
			}
		}()
	}
	return nil
}
