package preview

import (
	"os"
	"testing"

	"github.com/olmsync/olmsync/internal/testenv"
)

// TestMain stops the envtest control planes the live cluster tests start.
func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
