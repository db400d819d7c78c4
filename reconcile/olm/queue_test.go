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
// twenty sources add them, round after round: with ControllerConfig every round's controller
// stops; with controller-runtime's default, its priority queue, a round's workers stay blocked
// after the stop (kubernetes-sigs/controller-runtime#3538) — a manager would wait out its grace
// period and fail. The second half reproduces the bug ControllerConfig avoids: when it stops
// reproducing, the pinned controller-runtime has the fix and the priority queue may come back.
func TestShutdownWithBusyQueues(t *testing.T) {
	const rounds, stopWithin = 100, 10 * time.Second
	t.Run("ControllerConfig", func(t *testing.T) {
		for round := range rounds {
			if !stopsWithin(t, olm.ControllerConfig(), stopWithin) {
				t.Fatalf("round %d: the controller's workers did not stop within %s", round, stopWithin)
			}
		}
	})
	t.Run("priority queue", func(t *testing.T) {
		priority := config.Controller{SkipNameValidation: ptr.To(true), UsePriorityQueue: ptr.To(true)}
		for round := range rounds {
			if !stopsWithin(t, priority, stopWithin) {
				t.Logf("round %d: the priority queue's workers did not stop within %s (controller-runtime#3538)", round, stopWithin)
				return
			}
		}
		t.Fatalf("the priority queue stopped in all %d rounds: controller-runtime#3538 no longer reproduces, see olm.ControllerConfig", rounds)
	})
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
