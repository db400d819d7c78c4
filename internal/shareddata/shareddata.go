// Package shareddata finds the real public OLM data that tests and benchmarks read from
// ../shared beside the repository (a community catalog, bundles, real manifests). That
// data is never copied into the project.
//
// When ../shared is absent a test is skipped with a message saying so, unless CI is set:
// under CI a missing folder fails the test, so that a green CI run always means the real
// data was read.
package shareddata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// EnvVar overrides where the shared folder is.
const EnvVar = "OLMSYNC_SHARED"

// Root returns the shared folder: $OLMSYNC_SHARED, else ../shared beside the repository,
// else a shared folder beside one of the repository's parent folders (a clone kept one
// level deeper, as worktrees and CI checkouts often are). When none exists it returns
// ../shared, the place the messages name.
func Root() string {
	if dir := os.Getenv(EnvVar); dir != "" {
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	// file is <repo>/internal/shareddata/shareddata.go.
	repo := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	beside := filepath.Join(filepath.Dir(repo), "shared")
	for dir := repo; ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			return beside
		}
		if st, err := os.Stat(filepath.Join(parent, "shared", "data")); err == nil && st.IsDir() {
			return filepath.Join(parent, "shared")
		}
		dir = parent
	}
}

// Path returns Root()/rel, skipping the test (or failing it under CI) when it is missing.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(Root(), rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("shared test data %s is missing and CI is set: %v", p, err)
		}
		tb.Skipf("shared test data %s is missing (set %s or put the shared folder beside the repository); skipping", p, EnvVar)
	}
	return p
}
