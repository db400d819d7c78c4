// Package memtest puts a test under a memory ceiling, so that a regression in a bound
// (an unbounded parser, an evaluation without a deadline) fails the test run instead of
// exhausting the machine: the race detector does not run under `ulimit -v`, so the
// ceiling is kept in-process, with memguard.
package memtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/olmsync/olmsync/internal/memguard"
)

// Ceiling lets the test's process grow by at most extra bytes above its heap now. Past
// that, the process exits with a message naming the test: a test cannot be failed from
// another goroutine, and going on would exhaust the machine. The ceiling is lifted when
// the test ends.
func Ceiling(tb testing.TB, extra uint64) {
	tb.Helper()
	name := tb.Name()
	limit := memguard.HeapObjects() + extra
	stop := memguard.Watch(limit, func(e *memguard.ExceededError) {
		fmt.Fprintf(os.Stderr, "FAIL %s: %v: what it reads or evaluates is no longer bounded\n", name, e)
		os.Exit(3)
	})
	tb.Cleanup(stop)
}
