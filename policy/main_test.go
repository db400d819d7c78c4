package policy

import (
	"os"
	"testing"

	"github.com/olmsync/olmsync/internal/testenv"
)

func TestMain(m *testing.M) {
	ServeSandboxIfAsked()
	os.Exit(testenv.Run(m))
}
