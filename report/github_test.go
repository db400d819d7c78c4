package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEscapeData(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain message", "plain message"},
		{"100%", "100%25"},
		{"%0A is not a newline", "%250A is not a newline"},
		{"two\nlines", "two%0Alines"},
		{"windows\r\nline", "windows%0D%0Aline"},
		{"a: b, c", "a: b, c"}, // ':' and ',' are safe in the message
		{"::error::injected", "::error::injected"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := escapeData(tt.in); got != tt.want {
			t.Errorf("escapeData(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if back := unescapeWorkflow(escapeData(tt.in)); back != tt.in {
			t.Errorf("escapeData(%q) reads back as %q", tt.in, back)
		}
	}
}

func TestEscapeProperty(t *testing.T) {
	tests := []struct{ in, want string }{
		{"apps/etcd/subscription.yaml", "apps/etcd/subscription.yaml"},
		{"logging: 100%, v5.yaml", "logging%3A 100%25%2C v5.yaml"},
		{"a\nb\rc", "a%0Ab%0Dc"},
		{"file=x,line=1::", "file=x%2Cline=1%3A%3A"},
		{"%3A", "%253A"},
	}
	for _, tt := range tests {
		if got := escapeProperty(tt.in); got != tt.want {
			t.Errorf("escapeProperty(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if back := unescapeWorkflow(escapeProperty(tt.in)); back != tt.in {
			t.Errorf("escapeProperty(%q) reads back as %q", tt.in, back)
		}
	}
}

// unescapeWorkflow undoes the escapes as the Actions runner does.
func unescapeWorkflow(s string) string {
	return strings.NewReplacer("%25", "%", "%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",").Replace(s)
}

// workflowCmd is one parsed workflow command.
type workflowCmd struct {
	level, message string
	props          map[string]string
}

// parseWorkflowCommand reads a line the way the runner does: "::" then the command and
// its comma-separated properties, then "::" and the message.
func parseWorkflowCommand(t *testing.T, line string) workflowCmd {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "::")
	if !ok {
		t.Fatalf("line %q is not a workflow command", line)
	}
	head, data, ok := strings.Cut(rest, "::")
	if !ok {
		t.Fatalf("line %q has no message separator", line)
	}
	level, props, _ := strings.Cut(head, " ")
	cmd := workflowCmd{level: level, message: unescapeWorkflow(data), props: map[string]string{}}
	if props != "" {
		for _, p := range strings.Split(props, ",") {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				t.Fatalf("line %q: property %q has no value", line, p)
			}
			cmd.props[k] = unescapeWorkflow(v)
		}
	}
	return cmd
}

// TestGitHubCommandsParseBack parses every command of the output the way the runner
// does and checks them against the report: one per finding, most important first, with
// file, line and message intact whatever characters they hold.
func TestGitHubCommandsParseBack(t *testing.T) {
	r := fixtureReport(t)
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatGitHub, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	summary := lines[len(lines)-1]
	if strings.HasPrefix(strings.TrimSpace(summary), "::") || !strings.Contains(summary, "3 errors (2 new)") {
		t.Errorf("last line %q: want a plain summary", summary)
	}

	type annotation struct{ level, file, line, message string }
	var got []annotation
	for _, line := range lines[:len(lines)-1] {
		c := parseWorkflowCommand(t, line)
		got = append(got, annotation{c.level, c.props["file"], c.props["line"], c.message})
		if c.props["title"] == "" {
			t.Errorf("command %q has no title", line)
		}
	}
	// Violations first in each level, then problems, then render warnings: the findings
	// a pull request is about must be among the ten GitHub shows. What they say is the
	// report's, its unsafe characters written out (sanitize.go).
	r = sanitized(r)
	want := []annotation{
		{"error", "apps/etcd/subscription.yaml", "3", violationText(r.Violations[1])},
		{"error", "apps/odh/subscription.yaml", "9", violationText(r.Violations[4])},
		{"error", logFile, "12", violationText(r.Violations[5])},
		{"error", "apps/broken/kustomization.yaml", "7", "app broken: " + r.Problems[0].Message},
		{"warning", logFile, "30", violationText(r.Violations[6])},
		{"warning", "apps/etcd/configmap.yaml", "", violationText(r.Violations[0])},
		{"warning", "apps/legacy/kustomization.yaml", "", "app legacy: " + r.Problems[1].Message},
		{"warning", "apps/common/kustomization.yaml", "", r.Warnings[0].Message},
		{"notice", logFile, "12", changeText(r.Changes[0])},
		{"notice", "cluster-scope/base/loki/subscription.yaml", "1", changeText(r.Changes[1])},
		{"notice", "apps/etcd/operatorgroup.yaml", "1", changeText(r.Changes[2])},
		{"notice", "apps/etcd/subscription.yaml", "3", changeText(r.Changes[3])},
		{"notice", "apps/odh/csv.yaml", "1", violationText(r.Violations[2])},
		{"notice", "apps/odh/installplan.yaml", "1", violationText(r.Violations[3])},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(annotation{})); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	// The fixture's violations, in report order, are the ones the table above names.
	if r.Violations[4].Rule != "OP005" || !strings.Contains(violationText(r.Violations[4]), "::error::injected") {
		t.Fatalf("fixture order changed: %v", r.Violations[4])
	}
}

func TestWorkflowCommandLeavesOutUnknownProperties(t *testing.T) {
	tests := []struct {
		file  string
		line  int
		title string
		want  string
	}{
		{"a.yaml", 3, "T", "::error file=a.yaml,line=3,title=T::m\n"},
		{"a.yaml", 0, "T", "::error file=a.yaml,title=T::m\n"},
		{"", 3, "T", "::error title=T::m\n"}, // a line without a file means nothing
		{"", 0, "", "::error::m\n"},
	}
	for _, tt := range tests {
		if got := workflowCommand("error", tt.file, tt.line, tt.title, "m"); got != tt.want {
			t.Errorf("workflowCommand(%q, %d, %q) = %q, want %q", tt.file, tt.line, tt.title, got, tt.want)
		}
	}
}

// TestGitHubAnnotationCaps checks that a level with more findings than GitHub shows ends
// with a count of the rest, that the violations come before the problems whatever their
// number, and that nothing is lost: the rest is in the log, as plain lines.
func TestGitHubAnnotationCaps(t *testing.T) {
	r := &Report{Base: &Revision{Ref: "main"}}
	for i := range 70 {
		r.Problems = append(r.Problems, Problem{App: fmt.Sprintf("app-%02d", i), File: fmt.Sprintf("apps/%02d/kustomization.yaml", i),
			Message: "path missing", Status: StatusNew})
	}
	for i := range 3 {
		r.Violations = append(r.Violations, Violation{Rule: "OP004", Severity: SeverityError, App: "cs",
			File: fmt.Sprintf("zz/og-%d.yaml", i), Line: 1, Message: fmt.Sprintf("two groups %d", i), Status: StatusNew,
			Object: ObjectRef{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: "ns", Name: fmt.Sprint(i)}})
	}
	if err := Complete(r, FailOnNew); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatGitHub, Options{PathPrefix: "gitops"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	var errs []workflowCmd
	grouped := 0
	inGroup := false
	for _, line := range lines {
		switch {
		case line == "::group::olmsync: findings not annotated":
			inGroup = true
		case line == "::endgroup::":
			inGroup = false
		case inGroup:
			if strings.HasPrefix(strings.TrimSpace(line), "::") {
				t.Errorf("log line %q reads as a workflow command", line)
			}
			grouped++
		case strings.HasPrefix(line, "::error"):
			errs = append(errs, parseWorkflowCommand(t, line))
		}
	}
	if len(errs) != githubAnnotationsPerLevel {
		t.Fatalf("%d error annotations, want %d", len(errs), githubAnnotationsPerLevel)
	}
	for i := range 3 {
		if errs[i].props["file"] != fmt.Sprintf("gitops/zz/og-%d.yaml", i) {
			t.Errorf("error annotation %d is %v, want violation %d with the path prefix", i, errs[i].props, i)
		}
	}
	last := errs[githubAnnotationsPerLevel-1]
	if !strings.Contains(last.props["title"], "64 more errors not shown") || last.props["file"] != "" {
		t.Errorf("last error annotation = %+v, want the count of the 64 others", last)
	}
	if grouped != 64 {
		t.Errorf("%d findings in the log group, want 64", grouped)
	}
}
