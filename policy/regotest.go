package policy

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
)

// RegoTestResult is the outcome of one Rego unit test (a rule named test_*).
type RegoTestResult struct {
	// Package and Name identify the test: data.olmsync.rules.op001_test, test_….
	Package string
	Name    string
	// Source is where the test is declared.
	Source Source
	// Passed is true when the test succeeded; otherwise Error says why when the test did
	// not merely evaluate to false.
	Passed bool
	Error  string
}

func (r RegoTestResult) String() string {
	outcome := "PASS"
	if !r.Passed {
		outcome = "FAIL"
	}
	s := fmt.Sprintf("%s:%d: %s.%s: %s", r.Source.File, r.Source.Line, r.Package, r.Name, outcome)
	if r.Error != "" {
		s += ": " + r.Error
	}
	return s
}

// RunRegoTests runs the Rego unit tests of the built-in rules and of the given folders of
// users' rules (their *_test.rego files included), with the built-in rules and library
// loaded, as `opa test` would. Results are sorted by file and line. A test file that does
// not parse or compile is a *PolicyError.
func RunRegoTests(ctx context.Context, sources ...PolicySource) ([]RegoTestResult, error) {
	modules, problems := parseFolder(PolicySource{Root: builtinRoot, FS: builtinFS}, true)
	for _, src := range sources {
		mods, probs := parseFolder(src, true)
		problems = append(problems, probs...)
		maps.Copy(modules, mods)
	}
	if len(problems) > 0 {
		return nil, &PolicyError{Problems: problems}
	}
	store := inmem.New()
	txn, err := store.NewTransaction(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Abort(ctx, txn)
	runner := tester.NewRunner().
		SetCompiler(ast.NewCompiler().WithCapabilities(capabilities())).
		SetStore(store).
		SetModules(modules)
	ch, err := runner.RunTests(ctx, txn)
	if err != nil {
		return nil, policyErrorFrom(err)
	}
	var results []RegoTestResult
	for r := range ch {
		results = append(results, regoTestResult(r))
	}
	slices.SortFunc(results, func(a, b RegoTestResult) int {
		return cmp.Or(cmp.Compare(a.Source.File, b.Source.File), cmp.Compare(a.Source.Line, b.Source.Line), cmp.Compare(a.Name, b.Name))
	})
	return results, nil
}

func regoTestResult(r *tester.Result) RegoTestResult {
	out := RegoTestResult{Package: r.Package, Name: r.Name, Passed: r.Pass()}
	if r.Location != nil {
		out.Source = Source{File: r.Location.File, Line: r.Location.Row}
	}
	if r.Error != nil {
		out.Error = r.Error.Error()
	} else if r.Skip {
		out.Error = "skipped"
	}
	return out
}
