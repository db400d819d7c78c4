package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/memguard/memtest"
	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
)

// hostileRules is a folder of policy/testdata/hostile: loop builds gigabytes (the issue's
// numbers.range(1, 1e8)), slow loops without allocating.
func hostileRules(name string) string {
	return filepath.Join("..", "..", "policy", "testdata", "hostile", name)
}

// TestCheckRefusesABillionLaughs: the nine-level resource file (before: 23.9 GB,
// stopped only by SIGKILL) is a problem naming its file and line; the check exits 2 and
// the other app is still checked. Under a memory ceiling, so that a regression fails
// instead of exhausting the machine.
func TestCheckRefusesABillionLaughs(t *testing.T) {
	memtest.Ceiling(t, 1<<30)
	dir := t.TempDir()
	gittest.Write(t, dir, map[string]string{
		"bomb/kustomization.yaml": "resources:\n- cm.yaml\n",
		"bomb/cm.yaml":            yamltest.Laughs(9),
		"ok/kustomization.yaml":   "resources:\n- ip.yaml\n",
		"ok/ip.yaml":              installPlanYAML,
	})
	r, err := checkJSON(t, dir)
	wantExit(t, err, exitUsage)
	if len(r.Problems) != 1 || r.Problems[0].File != "bomb/cm.yaml" || r.Problems[0].Line != yamltest.LaughsLine ||
		!strings.Contains(r.Problems[0].Message, "document contains excessive aliasing") {
		t.Errorf("problems %+v, want bomb/cm.yaml:%d naming the aliasing", r.Problems, yamltest.LaughsLine)
	}
	if r.Summary.Errors == 0 {
		t.Error("the other app was not checked (its InstallPlan breaks OP010)")
	}
}

// TestCheckPolicyLimits: a user's rule that loops is stopped by --policy-timeout, one
// that allocates without end by --memory-limit (its sandbox gets half: issue 30); each is
// an error naming the rule and its file, and the check exits 2.
func TestCheckPolicyLimits(t *testing.T) {
	memtest.Ceiling(t, 3<<30)
	dir := t.TempDir()
	gittest.Write(t, dir, map[string]string{"ok/kustomization.yaml": "resources:\n- ip.yaml\n", "ok/ip.yaml": installPlanYAML})

	t.Run("timeout", func(t *testing.T) {
		r, err := checkJSON(t, dir, "--policy", hostileRules("slow"), "--policy-timeout", "300ms")
		wantExit(t, err, exitUsage)
		if len(r.Problems) != 1 || r.Problems[0].File != filepath.Join(hostileRules("slow"), "slow.rego") ||
			!strings.Contains(r.Problems[0].Message, "rule ACME667 (acme.slow) did not finish within the policy timeout of 300ms") {
			t.Errorf("problems %+v, want the slow rule named with its file", r.Problems)
		}
		if r.Summary.Errors == 0 {
			t.Error("the built-in rules did not run without the stopped rule")
		}
	})
	t.Run("memory", func(t *testing.T) {
		// Without a deadline that stops it first: the rule allocates ~150 MB a second.
		out, err := run(t, "check", dir, "--policy", hostileRules("loop"), "--memory-limit", "768Mi", "--policy-timeout", "5m")
		wantExit(t, err, exitUsage)
		for _, want := range []string{"loop.rego", "rule ACME666 (acme.loop) stopped the policy sandbox: it used", "over its limit of 384Mi"} {
			if !strings.Contains(out, want) {
				t.Errorf("output does not say %q:\n%s", want, out)
			}
		}
	})
	t.Run("usage", func(t *testing.T) {
		out, err := run(t, "check", dir, "--memory-limit", "lots")
		wantExit(t, err, exitUsage)
		if !strings.Contains(out, `--memory-limit "lots"`) {
			t.Errorf("output:\n%s", out)
		}
	})
}
