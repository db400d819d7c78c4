package policy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/olmsync/olmsync/internal/memguard"
	"github.com/olmsync/olmsync/internal/memguard/memtest"
)

// The hostile rules of testdata/hostile: loop/ builds gigabytes (the issue's
// numbers.range(1, 1e8)), slow/ loops without allocating.
func hostile(name string) PolicySource {
	return PolicySource{Root: "policies/" + name, FS: os.DirFS(filepath.Join("testdata", "hostile", name))}
}

// TestPolicyTimeout: a user's rule that runs past Options.Timeout is stopped and is a
// PolicyError naming the rule and its file, well before it would have ended.
func TestPolicyTimeout(t *testing.T) {
	memtest.Ceiling(t, 2<<30)
	e := newEngine(t, Options{Policies: []PolicySource{hostile("slow")}, Timeout: 500 * time.Millisecond})
	_, err := e.Evaluate(context.Background(), adrRepository())
	var pe *PolicyError
	if !errors.As(err, &pe) || len(pe.Problems) != 1 {
		t.Fatalf("err = %v, want a PolicyError with one problem", err)
	}
	p := pe.Problems[0]
	if p.File != "policies/slow/slow.rego" || !strings.Contains(p.Message, "rule ACME667 (acme.slow)") ||
		!strings.Contains(p.Message, "did not finish within the policy timeout of 500ms") {
		t.Errorf("problem %+v, want the rule, its file and the timeout", p)
	}
}

// TestPolicyMemoryCeiling: the numbers.range(1, 1e8) allocates faster than any
// deadline helps; a memory ceiling (memguard, as `olmsync check --memory-limit` sets it)
// cancels the evaluation with its cause, and the error names the rule, its file and the
// ceiling. The test itself runs under a higher ceiling, so that a regression fails
// instead of exhausting the machine.
func TestPolicyMemoryCeiling(t *testing.T) {
	memtest.Ceiling(t, 3<<30)
	// No deadline: only the ceiling may stop the rule. With a minute's deadline, the rule
	// grew too slowly to reach the ceiling first at load average 35 (CI), and the deadline
	// stopped it instead.
	e := newEngine(t, Options{Policies: []PolicySource{hostile("loop")}, Timeout: -1})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := memguard.Watch(memguard.HeapObjects()+512<<20, func(e *memguard.ExceededError) { cancel(e) })
	defer stop()
	_, err := e.Evaluate(ctx, adrRepository())
	var pe *PolicyError
	if !errors.As(err, &pe) || len(pe.Problems) != 1 {
		t.Fatalf("err = %v, want a PolicyError with one problem", err)
	}
	p := pe.Problems[0]
	if p.File != "policies/loop/loop.rego" || !strings.Contains(p.Message, "rule ACME666 (acme.loop)") ||
		!strings.Contains(p.Message, "stopped: the heap reached") || !strings.Contains(p.Message, "of the memory limit") {
		t.Errorf("problem %+v, want the rule, its file and the memory ceiling", p)
	}
	var me *memguard.ExceededError
	if !errors.As(err, &me) {
		t.Errorf("err = %v does not carry the ceiling's cause", err)
	}
}
