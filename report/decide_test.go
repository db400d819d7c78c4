package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExitCode(t *testing.T) {
	errNew := Violation{Rule: "OP001", Severity: SeverityError, Status: StatusNew}
	errOld := Violation{Rule: "OP001", Severity: SeverityError, Status: StatusPreExisting}
	errNoBase := Violation{Rule: "OP001", Severity: SeverityError}
	warnNew := Violation{Rule: "OP012", Severity: SeverityWarning, Status: StatusNew}
	waivedNew := Violation{Rule: "OP001", Severity: SeverityError, Status: StatusNew, Waived: true}
	headProblem := Problem{File: "apps/x/kustomization.yaml", Message: "missing base"}
	baseProblem := Problem{File: "apps/x/kustomization.yaml", Message: "missing base", Base: true}
	oldProblem := Problem{File: "apps/x/kustomization.yaml", Message: "missing base", Status: StatusPreExisting}
	newProblem := Problem{File: "apps/y/kustomization.yaml", Message: "missing base", Status: StatusNew}
	errUnknown := Violation{Rule: "OP001", Severity: SeverityError, Status: StatusUnknown}

	tests := []struct {
		name       string
		violations []Violation
		problems   []Problem
		failOn     FailOn
		want       int
	}{
		{"nothing found", nil, nil, FailOnAll, ExitOK},
		{"an error", []Violation{errNoBase}, nil, FailOnAll, ExitViolations},
		{"only warnings", []Violation{warnNew}, nil, FailOnAll, ExitOK},
		{"a waived error", []Violation{waivedNew}, nil, FailOnAll, ExitOK},
		{"a pre-existing error, fail on all", []Violation{errOld}, nil, FailOnAll, ExitViolations},
		{"a pre-existing error, fail on new", []Violation{errOld}, nil, FailOnNew, ExitOK},
		{"a new error, fail on new", []Violation{errOld, errNew}, nil, FailOnNew, ExitViolations},
		{"a new warning, fail on new", []Violation{errOld, warnNew}, nil, FailOnNew, ExitOK},
		{"a waived new error, fail on new", []Violation{waivedNew}, nil, FailOnNew, ExitOK},
		{"fail on new without a base counts every error", []Violation{errNoBase}, nil, FailOnNew, ExitViolations},
		{"a problem in the checked revision", nil, []Problem{headProblem}, FailOnAll, ExitIncomplete},
		{"a problem wins over violations", []Violation{errNew}, []Problem{headProblem}, FailOnAll, ExitIncomplete},
		{"a problem only in the base", nil, []Problem{baseProblem}, FailOnAll, ExitOK},
		{"a base problem and a new error", []Violation{errNew}, []Problem{baseProblem}, FailOnNew, ExitViolations},
		{"empty fail-on is all", []Violation{errOld}, nil, "", ExitViolations},
		{"a pre-existing problem, fail on new", nil, []Problem{oldProblem}, FailOnNew, ExitOK},
		{"a pre-existing problem and a new error, fail on new", []Violation{errNew}, []Problem{oldProblem}, FailOnNew, ExitViolations},
		{"a pre-existing problem, fail on all", nil, []Problem{oldProblem}, FailOnAll, ExitIncomplete},
		{"a new problem, fail on new", nil, []Problem{oldProblem, newProblem}, FailOnNew, ExitIncomplete},
		{"a violation of unknown status never fails", []Violation{errUnknown}, nil, FailOnAll, ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Violations: tt.violations, Problems: tt.problems}
			if got := ExitCode(r, tt.failOn); got != tt.want {
				t.Errorf("ExitCode = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestMarkAgainstBase(t *testing.T) {
	v := func(rule, app string, obj ObjectRef, file string, line int, msg string) Violation {
		return Violation{Rule: rule, Severity: SeverityError, App: app, Object: obj, File: file, Line: line, Message: msg}
	}
	sub := subEtcd
	subV1 := sub
	subV1.APIVersion = "operators.coreos.com/v1"
	otherNS := sub
	otherNS.Namespace = "etcd-prod"
	og := ogOld

	tests := []struct {
		name       string
		head, base []Violation
		want       []Status
	}{
		{"no base violations: all new", []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, nil, []Status{StatusNew}},
		{"same violation", []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Status{StatusPreExisting}},
		{"line moved", []Violation{v("OP007", "etcd", sub, "a.yaml", 30, "m")}, []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Status{StatusPreExisting}},
		{"file moved", []Violation{v("OP007", "etcd", sub, "b/sub.yaml", 1, "m")}, []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Status{StatusPreExisting}},
		{"message reworded", []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "channel fast")}, []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "channel stable")}, []Status{StatusPreExisting}},
		{"another API version of the same kind", []Violation{v("OP007", "etcd", subV1, "a.yaml", 3, "m")}, []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Status{StatusPreExisting}},
		{"another rule", []Violation{v("OP005", "etcd", sub, "a.yaml", 3, "m")}, []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Status{StatusNew}},
		// The same object in the same file, now deployed by an app of another name: an
		// Application or root renamed or moved (issue 29), not a new violation.
		{"another app, same file", []Violation{v("OP007", "etcd-2", sub, "a.yaml", 3, "m")}, []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Status{StatusPreExisting}},
		{"another app, another file", []Violation{v("OP007", "etcd-2", sub, "b.yaml", 3, "m")}, []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Status{StatusNew}},
		{"another namespace", []Violation{v("OP007", "etcd", otherNS, "a.yaml", 3, "m")}, []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Status{StatusNew}},
		{
			"a second occurrence is new",
			[]Violation{v("OP004", "cs", og, "a.yaml", 3, "m"), v("OP004", "cs", og, "a.yaml", 9, "m")},
			[]Violation{v("OP004", "cs", og, "a.yaml", 3, "m")},
			[]Status{StatusPreExisting, StatusNew},
		},
		{
			"identical messages pair up first",
			[]Violation{v("OP004", "cs", og, "a.yaml", 3, "new problem"), v("OP004", "cs", og, "a.yaml", 9, "old problem")},
			[]Violation{v("OP004", "cs", og, "a.yaml", 3, "old problem")},
			[]Status{StatusNew, StatusPreExisting},
		},
		{
			"without an object, the file identifies",
			[]Violation{v("OP000", "cs", ObjectRef{}, "olmsync.yaml", 3, "m"), v("OP000", "cs", ObjectRef{}, "other.yaml", 3, "m")},
			[]Violation{v("OP000", "cs", ObjectRef{}, "olmsync.yaml", 7, "m")},
			[]Status{StatusPreExisting, StatusNew},
		},
		{"a waived base violation still counts", []Violation{v("OP007", "etcd", sub, "a.yaml", 3, "m")}, []Violation{{Rule: "OP007", App: "etcd", Object: sub, Waived: true}}, []Status{StatusPreExisting}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			headBefore := append([]Violation(nil), tt.head...)
			got := MarkAgainstBase(tt.head, tt.base)
			var statuses []Status
			for _, g := range got {
				statuses = append(statuses, g.Status)
			}
			if diff := cmp.Diff(tt.want, statuses); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(headBefore, tt.head); diff != "" {
				t.Errorf("MarkAgainstBase changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, f := range Formats() {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := ParseFormat("yaml"); !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "sarif") {
		t.Errorf("ParseFormat(yaml): %v, want ErrUnknownFormat listing the formats", err)
	}
	for in, want := range map[string]FailOn{"": FailOnAll, "all": FailOnAll, "new": FailOnNew} {
		if got, err := ParseFailOn(in); err != nil || got != want {
			t.Errorf("ParseFailOn(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFailOn("warnings"); err == nil {
		t.Error("ParseFailOn(warnings) succeeded")
	}
	for in, want := range map[string]GroupBy{"": GroupByDefault, "file": GroupByFile, "app": GroupByApp, "rule": GroupByRule} {
		if got, err := ParseGroupBy(in); err != nil || got != want {
			t.Errorf("ParseGroupBy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseGroupBy("severity"); err == nil {
		t.Error("ParseGroupBy(severity) succeeded")
	}
}

func TestRevisionString(t *testing.T) {
	tests := []struct {
		rev  Revision
		want string
	}{
		{Revision{Ref: "main", Commit: "9e8d7c6b5a4f3e2d1c0b"}, "main (9e8d7c6b5a4f)"},
		{Revision{Ref: "9e8d7c6", Commit: "9e8d7c6b5a4f3e2d1c0b"}, "9e8d7c6b5a4f"},
		{Revision{Commit: "9e8d7c6"}, "9e8d7c6"},
		{Revision{Ref: "worktree"}, "worktree"},
		{Revision{}, "worktree"},
	}
	for _, tt := range tests {
		if got := tt.rev.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.rev, got, tt.want)
		}
	}
}

func TestObjectRef(t *testing.T) {
	tests := []struct {
		ref          ObjectRef
		group, human string
	}{
		{subEtcd, "operators.coreos.com", "Subscription etcd/etcd"},
		{nsEtcd, "", "Namespace etcd"},
		{ObjectRef{}, "", ""},
	}
	for _, tt := range tests {
		if got := tt.ref.Group(); got != tt.group {
			t.Errorf("%v.Group() = %q, want %q", tt.ref, got, tt.group)
		}
		if got := tt.ref.String(); got != tt.human {
			t.Errorf("String() = %q, want %q", got, tt.human)
		}
	}
}
