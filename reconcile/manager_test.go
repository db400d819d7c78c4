package reconcile

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Run(m))
}

// TestInstallCRDsThenStart: on a cluster without olmsync's CRDs (kind, k3s, `olmsync run
// --local`), InstallCRDs returns once they are served, so that a manager built right
// after — whose controllers index and watch those kinds at once — starts.
func TestInstallCRDsThenStart(t *testing.T) {
	env := testenv.GetBare(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := InstallCRDs(ctx, env.Client); err != nil {
		t.Fatal(err)
	}
	mgr, err := NewManager(ctx, env.Config, Options{OLM: olm.ModeEmbedded, MetricsAddr: "0", ProbeAddr: "0"})
	if err != nil {
		t.Fatalf("a manager built right after InstallCRDs: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	select {
	case <-mgr.Elected():
	case err := <-done:
		t.Fatalf("manager stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the manager did not start")
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the caches of the controllers did not sync")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("manager: %v", err)
	}
}
