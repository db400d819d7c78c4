package compare_test

import (
	"flag"
	"os"
	"testing"

	"github.com/olmsync/olmsync/internal/testenv"
)

// TestMain runs the cases of TestPreviewMatchesControllers side by side: they wait on the
// API server, not on the CPU, so the default -parallel (GOMAXPROCS) would serialise them.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "32")
	}
	os.Exit(testenv.Run(m))
}
