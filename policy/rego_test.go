package policy

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/olmsync/olmsync/internal/shareddata"
)

var examplePolicies = PolicySource{Root: "policy/testdata/policies", FS: os.DirFS("testdata/policies")}

// TestRegoUnitTests runs every Rego unit test of the built-in rules (policy/rego) and of
// the example users' rules (testdata/policies), the tests `opa test policy/` runs.
func TestRegoUnitTests(t *testing.T) {
	results, err := RunRegoTests(context.Background(), examplePolicies)
	if err != nil {
		t.Fatalf("RunRegoTests: %v", err)
	}
	if len(results) == 0 {
		t.Fatal("no Rego tests ran")
	}
	perPackage := map[string]int{}
	for _, r := range results {
		perPackage[r.Package]++
		if !r.Passed {
			t.Errorf("Rego test failed: %s", r)
		}
	}
	// Every rule has tests of its own: at least one input that passes and one that breaks it.
	for _, rule := range BuiltinRules() {
		if rule.Package == "" {
			continue // the waiver rules are Go (waiver_test.go)
		}
		pkg := rule.Package + "_test"
		if perPackage[pkg] < 2 {
			t.Errorf("rule %s: %d Rego tests in %s, want at least 2 (a compliant and a violating input)", rule.ID, perPackage[pkg], pkg)
		}
	}
	for _, pkg := range []string{"data.acme.channels_test", "data.main_test"} {
		if perPackage[pkg] == 0 {
			t.Errorf("the example users' tests of %s did not run", pkg)
		}
	}
	t.Logf("%d Rego tests passed", len(results))
}

// TestRunRegoTestsReportsFailures makes sure a failing or erroring Rego test is reported
// as failed, so TestRegoUnitTests can fail.
func TestRunRegoTestsReportsFailures(t *testing.T) {
	src := PolicySource{Root: "broken", FS: fstest.MapFS{
		"wrong_test.rego": {Data: []byte(`package wrong_test

import data.olmsync.rules.op010

test_expects_the_wrong_thing if {
	count(op010.deny) == 1 with input as {"apps": []}
}

test_errors if {
	x := 1 / 0
	x == 1
}

test_passes if {
	count(op010.deny) == 0 with input as {"apps": []}
}
`)},
	}}
	results, err := RunRegoTests(context.Background(), src)
	if err != nil {
		t.Fatalf("RunRegoTests: %v", err)
	}
	got := map[string]bool{}
	for _, r := range results {
		if r.Package == "data.wrong_test" {
			got[r.Name] = r.Passed
		}
	}
	want := map[string]bool{"test_expects_the_wrong_thing": false, "test_errors": false, "test_passes": true}
	for name, passed := range want {
		if p, ok := got[name]; !ok || p != passed {
			t.Errorf("%s: passed=%v (ran: %v), want passed=%v", name, p, ok, passed)
		}
	}
}

func TestRunRegoTestsNamesBrokenTestFile(t *testing.T) {
	src := PolicySource{Root: "mine", FS: fstest.MapFS{"a_test.rego": {Data: []byte("package a_test\n\ntest_x if nope(1)\n")}}}
	_, err := RunRegoTests(context.Background(), src)
	if err == nil || !strings.Contains(err.Error(), "mine/a_test.rego:3") {
		t.Fatalf("error = %v, want one naming mine/a_test.rego:3", err)
	}
}

// TestBuiltinRuleMetadata checks the catalog the reports use: every built-in rule has its
// ID, title, description, severity and the ADR sentence it enforces, quoted word for word
// (but OP014, which quotes olm-behaviour.md, and OP015, which enforces OLM's naming).
func TestBuiltinRuleMetadata(t *testing.T) {
	adr, err := os.ReadFile(shareddata.Path(t, "seeds/003_ded47cb0eb2aecc2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The ADR's text breaks lines inside sentences (and once drops a space: "hosted
	// incluster-scope"), so quotes are compared without whitespace.
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	adrText := squeeze(string(adr))

	olm, err := os.ReadFile(shareddata.Path(t, "olm-behaviour.md"))
	if err != nil {
		t.Fatal(err)
	}
	olmText := squeeze(strings.ReplaceAll(string(olm), "`", ""))

	wantIDs := []string{"OP001", "OP002", "OP003", "OP004", "OP005", "OP006", "OP007", "OP008", "OP009", "OP010",
		"OP011", "OP012", "OP013", "OP014", "OP015", "OP016", RuleWaiverExpired, RuleWaiverUnused, RuleWaiverMalformed}
	// Rules that guard against an OLM behaviour rather than enforce the ADR quote
	// ../shared/olm-behaviour.md instead.
	fromOLM := map[string]bool{"OP014": true}
	// OP015 (a startingCSV that is no CSV name) keeps OLM from failing on the cluster; it
	// quotes neither the ADR nor olm-behaviour.md.
	noADR := map[string]bool{"OP015": true}
	rules := BuiltinRules()
	if len(rules) != len(wantIDs) {
		t.Fatalf("%d built-in rules, want %d", len(rules), len(wantIDs))
	}
	warningOnly := map[string]bool{"OP012": true, RuleWaiverUnused: true}
	for i, r := range rules {
		if r.ID != wantIDs[i] {
			t.Errorf("rule %d is %s, want %s", i, r.ID, wantIDs[i])
		}
		if r.Title == "" || len(r.Description) < 80 {
			t.Errorf("%s: title %q, description %q: both are needed, the description a paragraph", r.ID, r.Title, r.Description)
		}
		wantSeverity := SeverityError
		if warningOnly[r.ID] {
			wantSeverity = SeverityWarning
		}
		if r.Severity != wantSeverity {
			t.Errorf("%s: severity %s, want %s", r.ID, r.Severity, wantSeverity)
		}
		if r.Package == "" {
			continue
		}
		switch {
		case fromOLM[r.ID]:
			if r.OLM == "" || r.ADR != "" || !strings.Contains(olmText, squeeze(r.OLM)) {
				t.Errorf("%s: OLM quote %q is not in olm-behaviour.md (or it quotes the ADR too)", r.ID, r.OLM)
			}
		case noADR[r.ID]:
			if r.ADR != "" {
				t.Errorf("%s: quotes the ADR (%q), which has no sentence about it", r.ID, r.ADR)
			}
		case r.ADR == "" || !strings.Contains(adrText, squeeze(r.ADR)):
			t.Errorf("%s: ADR quote %q is not in the ADR", r.ID, r.ADR)
		}
		if r.Package != "data.olmsync.rules."+strings.ToLower(r.ID) || !strings.HasPrefix(r.File, "policy/rego/"+strings.ToLower(r.ID)+"_") {
			t.Errorf("%s: package %s in %s; want data.olmsync.rules.%s in policy/rego/%s_*.rego",
				r.ID, r.Package, r.File, strings.ToLower(r.ID), strings.ToLower(r.ID))
		}
		if r.ID != "OP011" && len(r.Kinds) == 0 {
			t.Errorf("%s: no kinds in its metadata", r.ID)
		}
		if help := r.Help(); !strings.Contains(help, r.Description) || !strings.Contains(help, r.ADR) || !strings.Contains(help, r.OLM) {
			t.Errorf("%s: Help() = %q lacks the description or the ADR quote", r.ID, help)
		}
	}
}

// TestBuiltinSeverityMatchesRules checks each built-in package's metadata severity against
// the rules it has: deny rules make it an error, warn rules alone a warning.
func TestBuiltinSeverityMatchesRules(t *testing.T) {
	modules, problems := parseFolder(PolicySource{Root: builtinRoot, FS: builtinFS}, false)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, pkg := range rulePackages(modules, false) {
		want := severityOf(pkg.names)
		if pkg.rule.Severity != want {
			t.Errorf("%s has rules %v, so severity %s, but its metadata says %s", pkg.rule.ID, pkg.names, want, pkg.rule.Severity)
		}
		if !regexp.MustCompile(`^OP0\d\d$`).MatchString(pkg.rule.ID) {
			t.Errorf("built-in package %s has ID %q", pkg.rule.Package, pkg.rule.ID)
		}
	}
}

// TestBuiltinRulesCompileStrict keeps the built-in rules clean under OPA's strict mode
// (no unused variables, imports or arguments; no deprecated built-ins), as
// `opa check --strict policy/rego` would.
func TestBuiltinRulesCompileStrict(t *testing.T) {
	modules, problems := parseFolder(PolicySource{Root: builtinRoot, FS: builtinFS}, true)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	c := ast.NewCompiler().WithStrict(true).WithCapabilities(capabilities())
	if c.Compile(modules); c.Failed() {
		t.Fatalf("strict compile: %v", c.Errors)
	}
}
