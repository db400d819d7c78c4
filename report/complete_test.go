package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompleteSummarizes(t *testing.T) {
	r := fixtureReport(t)
	want := Summary{
		Result: ResultIncomplete, FailOn: FailOnNew, Apps: 3, Objects: 9,
		Errors: 3, Warnings: 2, Waived: 2, New: 3, PreExisting: 2,
		Changes: 4, Problems: 2, RenderWarnings: 1,
	}
	if diff := cmp.Diff(want, r.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	r.Problems = r.Problems[1:] // only the base's problem is left
	if err := Complete(r, FailOnNew); err != nil {
		t.Fatal(err)
	}
	if r.Summary.Result != ResultFailed {
		t.Errorf("with new errors and no problem of the head: result %s, want failed", r.Summary.Result)
	}
}

func TestCompleteNormalizes(t *testing.T) {
	r := &Report{
		Base:  &Revision{Ref: "main"},
		Rules: []Rule{{ID: "OP009", Severity: SeverityError}},
		Violations: []Violation{
			{Rule: "OP009", App: "b", File: `.\apps\b\csv.yaml`, Line: 2, Waiver: &Waiver{Reason: "r"}},
			{Rule: "X1", Severity: SeverityWarning, App: "a", File: "./apps/a/x.yaml", Line: 9},
			{Rule: "OP009", Severity: SeverityWarning, App: "a", File: "./apps/a/x.yaml", Line: 1},
		},
		Warnings: []Warning{
			{File: "./k.yaml", Message: "deprecated", Apps: []string{"b"}},
			{File: "k.yaml", Message: "deprecated", Apps: []string{"a", "b"}},
			{File: "k.yaml", Message: "another", Apps: []string{"c"}},
		},
	}
	if err := Complete(r, FailOnAll); err != nil {
		t.Fatal(err)
	}
	if r.APIVersion != APIVersion || r.Kind != Kind || r.Tool.Name != "olmsync" {
		t.Errorf("type %s/%s tool %q", r.APIVersion, r.Kind, r.Tool.Name)
	}
	var order []string
	for _, v := range r.Violations {
		order = append(order, v.File+":"+v.Rule)
	}
	// Backslashes are not separators on Linux; filepath.ToSlash leaves them, which is
	// what a repository path with a backslash in a name needs.
	wantOrder := []string{`.\apps\b\csv.yaml:OP009`, "apps/a/x.yaml:OP009", "apps/a/x.yaml:X1"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("violation order (-want +got):\n%s", diff)
	}
	waived := r.Violations[0]
	if !waived.Waived || waived.Severity != SeverityError {
		t.Errorf("violation with a waiver and no severity: waived=%v severity=%q, want true and the rule's", waived.Waived, waived.Severity)
	}
	if rule, ok := r.rule("X1"); !ok || rule.Severity != SeverityWarning || rule.Title != "X1" {
		t.Errorf("rule X1 missing from the catalog was not added: %+v", rule)
	}
	wantWarnings := []Warning{
		{File: "k.yaml", Message: "another", Apps: []string{"c"}},
		{File: "k.yaml", Message: "deprecated", Apps: []string{"a", "b"}},
	}
	if diff := cmp.Diff(wantWarnings, r.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	for name, l := range map[string]int{"apps": len(r.Apps), "changes": len(r.Changes), "problems": len(r.Problems)} {
		if l != 0 {
			t.Errorf("%s: %d", name, l)
		}
	}
	if r.Apps == nil || r.Changes == nil || r.Problems == nil {
		t.Error("empty lists must be [] in JSON, not null")
	}
}

func TestCompleteRejectsInvalidValues(t *testing.T) {
	tests := []struct {
		name   string
		report Report
		failOn FailOn
		want   string
	}{
		{"unknown severity", Report{Violations: []Violation{{Rule: "A", Severity: "fatal"}}}, FailOnAll, `unknown severity "fatal"`},
		{"no severity anywhere", Report{Violations: []Violation{{Rule: "A"}}, Rules: []Rule{{ID: "A"}}}, FailOnAll, `rule A: unknown severity ""`},
		{"no rule", Report{Violations: []Violation{{Severity: SeverityError}}}, FailOnAll, "has no rule"},
		{"status without a base", Report{Violations: []Violation{{Rule: "A", Severity: SeverityError, Status: StatusNew}}}, FailOnAll, "without a base revision"},
		{"unknown status", Report{Base: &Revision{}, Violations: []Violation{{Rule: "A", Severity: SeverityError, Status: "old"}}}, FailOnAll, `unknown status "old"`},
		{"rule twice", Report{Rules: []Rule{{ID: "A", Severity: SeverityError}, {ID: "A", Severity: SeverityError}}}, FailOnAll, "in the catalog twice"},
		{"unknown change", Report{Base: &Revision{}, Changes: []Change{{Type: "renamed"}}}, FailOnAll, `unknown type "renamed"`},
		{"changes without a base", Report{Changes: []Change{{Type: ChangeAdded}}}, FailOnAll, "without a base revision"},
		{"unknown fail-on", Report{}, "some", `unknown --fail-on value "some"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.report
			err := Complete(&r, tt.failOn)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Complete: %v, want an error containing %q", err, tt.want)
			}
			if r.Summary.Result == "" {
				t.Error("an invalid report was not completed as far as it could be")
			}
		})
	}
}
