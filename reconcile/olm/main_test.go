package olm_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/olmsync/olmsync/internal/testenv"
)

// TestMain discards the managers' logs, as they were already (no logger was set), without
// controller-runtime's 30 s warning and stack trace in the middle of a benchmark's output.
func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Run(m))
}
