package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The tests of this file evaluate users' rules in a sandbox: a child process of the test
// binary (TestMain serves it).

// TestSandboxFindsWhatTheProcessFinds: the users' rules in the sandbox find what they
// find in the process, and the built-in rules what they find.
func TestSandboxFindsWhatTheProcessFinds(t *testing.T) {
	in := cluster("cl1",
		clusterScopeApp(entry(operatorGroup("team-a", "team-a", map[string]any{"targetNamespaces": []any{"team-a"}}), "cs/og.yaml", 1)),
		individualApp("team-a", "team-a", entry(subscription("team-a", "etcd", "etcd"), "team-a/sub.yaml", 3), entry(configMap("team-a", "cm"), "team-a/cm.yaml", 1)),
	)
	inProcess := evaluate(t, newEngine(t, Options{Policies: []PolicySource{examplePolicies}}), in)
	sandboxed := evaluate(t, newEngine(t, Options{Policies: []PolicySource{examplePolicies}, Sandbox: &Sandbox{}}), in)
	if len(inProcess) == 0 {
		t.Fatal("the example rules find nothing: the comparison proves nothing")
	}
	if diff := cmp.Diff(inProcess, sandboxed); diff != "" {
		t.Errorf("sandboxed findings (-in process +sandboxed):\n%s", diff)
	}
}

// TestSandboxStopsARuleThatExhaustsMemory: a rule whose replace() grows a string to
// hundreds of megabytes, in one built-in call no deadline can interrupt, took the whole
// process down ("fatal error: out of memory", issue 30). In the sandbox it is stopped past
// the sandbox's memory, and its evaluation is a problem naming the rule and its file.
func TestSandboxStopsARuleThatExhaustsMemory(t *testing.T) {
	grow := PolicySource{Root: "rules", FS: fstest.MapFS{"grow.rego": {Data: []byte(`# METADATA
# title: grows
# custom:
#   id: ACME666
package acme.grow

s0 := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
s1 := replace(s0, "a", s0)
s2 := replace(s1, "a", s1)
s3 := replace(s2, "a", s2)

deny contains "never" if count(s3) > 0
`)}}}
	e := newEngine(t, Options{Policies: []PolicySource{grow}, Sandbox: &Sandbox{MemoryLimit: 128 << 20}})
	_, err := e.Findings(context.Background(), cluster("cl1", individualApp("a", "a", entry(configMap("a", "x"), "a/cm.yaml", 1))))
	var pe *PolicyError
	if !errors.As(err, &pe) || !errors.Is(err, ErrSandbox) || len(pe.Problems) != 1 {
		t.Fatalf("err = %v, want a PolicyError of the stopped sandbox", err)
	}
	p := pe.Problems[0]
	if p.File != "rules/grow.rego" || !strings.Contains(p.Message, "rule ACME666 (acme.grow) stopped the policy sandbox: it used ") ||
		!strings.Contains(p.Message, "over its limit of 128Mi") {
		t.Errorf("problem %+v, want it to name the rule, its file and the memory limit", p)
	}
}

// TestSandboxCompileErrors: a rule that does not compile is a problem naming its file and
// line, from the sandbox as from the process.
func TestSandboxCompileErrors(t *testing.T) {
	broken := PolicySource{Root: "rules", FS: fstest.MapFS{"broken.rego": {Data: []byte("package acme.broken\n\ndeny contains msg if {\n\tmsg := undefined_function(1)\n}\n")}}}
	e := newEngine(t, Options{Policies: []PolicySource{broken}, Sandbox: &Sandbox{}})
	_, err := e.Findings(context.Background(), cluster("cl1"))
	var pe *PolicyError
	if !errors.As(err, &pe) || len(pe.Problems) == 0 || pe.Problems[0].File != "rules/broken.rego" || pe.Problems[0].Line != 4 {
		t.Fatalf("err = %v, want a problem at rules/broken.rego:4", err)
	}
}

// TestSandboxBoundsCompilation: a policy of 20,000 rules took 20 s to compile and no limit
// covered it (issue 30). In the sandbox the compilation gets the policy timeout and a
// second. 20,000 independent rules take 1.5 s on Go 1.27, too near that second to fail
// for sure; a chain of 10,000, each reading the one before, takes 10 s in 280 MB.
func TestSandboxBoundsCompilation(t *testing.T) {
	var b strings.Builder
	b.WriteString("package acme.many\n\nr0 contains x if { some x in input.apps }\n")
	for i := 1; i < 10000; i++ {
		fmt.Fprintf(&b, "r%d contains x if { some x in r%d; x.name != \"app-%d\" }\n", i, i-1, i)
	}
	b.WriteString("deny contains \"never\" if false\n")
	many := PolicySource{Root: "rules", FS: fstest.MapFS{"many.rego": {Data: []byte(b.String())}}}
	e := newEngine(t, Options{Policies: []PolicySource{many}, Sandbox: &Sandbox{}, Timeout: 200 * time.Millisecond})
	_, err := e.Findings(context.Background(), cluster("cl1"))
	if !errors.Is(err, ErrSandbox) || !strings.Contains(err.Error(), "compiling the rules took longer than the policy timeout of 200ms") {
		t.Fatalf("err = %v, want the compilation stopped at the policy timeout", err)
	}
}

// TestBuiltinErrorsAreProblems: a built-in function that fails — regex.match of a pattern
// that does not compile, yaml.unmarshal of a bomb — left its rule undefined, so the rule
// never fired and nobody was told (issue 30). Each failure is a problem naming the rule's
// file and line, in the process and in the sandbox.
func TestBuiltinErrorsAreProblems(t *testing.T) {
	rules := PolicySource{Root: "rules", FS: fstest.MapFS{"bad.rego": {Data: []byte(`package acme.bad

deny contains "bad pattern" if regex.match("[", input.cluster)

deny contains "a bomb" if yaml.unmarshal("a: &a [*a, *a]\nb: *a\n")
`)}}}
	for _, sandbox := range []*Sandbox{nil, {}} {
		e := newEngine(t, Options{Policies: []PolicySource{rules}, Sandbox: sandbox})
		_, err := e.Findings(context.Background(), cluster("cl1"))
		var pe *PolicyError
		if !errors.As(err, &pe) {
			t.Fatalf("sandbox %t: err = %v, want a PolicyError", sandbox != nil, err)
		}
		var lines []int
		for _, p := range pe.Problems {
			if p.File != "rules/bad.rego" || !strings.Contains(p.Message, "a built-in function failed") {
				t.Errorf("sandbox %t: problem %+v", sandbox != nil, p)
			}
			lines = append(lines, p.Line)
		}
		if !slices.Contains(lines, 3) || !slices.Contains(lines, 5) {
			t.Errorf("sandbox %t: problems at lines %v, want 3 and 5", sandbox != nil, lines)
		}
	}
}
