package main

import (
	"os"
	"testing"

	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/policy"
)

// runMainEnv makes the test binary run olmsync's main instead of the tests: the signal
// tests start it as a process of its own, with olmsync's arguments.
const runMainEnv = "OLMSYNC_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	policy.ServeSandboxIfAsked() // the sandbox `check` starts for users' rules is this binary
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(testenv.Run(m))
}
