package report

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestGolden(t *testing.T) {
	tests := []struct {
		golden string
		report func(testing.TB) *Report
		format Format
		opts   Options
	}{
		{"full.txt", fixtureReport, FormatText, Options{}},
		{"full.color.txt", fixtureReport, FormatText, Options{Color: true}},
		{"full.by-app.txt", fixtureReport, FormatText, Options{GroupBy: GroupByApp}},
		{"full.by-rule.txt", fixtureReport, FormatText, Options{GroupBy: GroupByRule}},
		{"full.json", fixtureReport, FormatJSON, Options{}},
		{"full.sarif", fixtureReport, FormatSARIF, Options{}},
		{"full.junit.xml", fixtureReport, FormatJUnit, Options{}},
		{"full.by-rule.junit.xml", fixtureReport, FormatJUnit, Options{GroupBy: GroupByRule}},
		{"full.github.txt", fixtureReport, FormatGitHub, Options{}},
		{"full.md", fixtureReport, FormatMarkdown, Options{}},
		{"full.links.md", fixtureReport, FormatMarkdown, Options{SourceURL: "https://github.com/example/gitops/blob/3f2a1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f/"}},
		{"nobase.txt", noBaseReport, FormatText, Options{}},
		{"nobase.github.txt", noBaseReport, FormatGitHub, Options{}},
		{"nobase.md", noBaseReport, FormatMarkdown, Options{}},
		{"nobase.sarif", noBaseReport, FormatSARIF, Options{}},
		{"clean.txt", cleanReport, FormatText, Options{}},
		{"clean.md", cleanReport, FormatMarkdown, Options{}},
		{"clean.junit.xml", cleanReport, FormatJUnit, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tt.report(t), tt.format, tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, buf.Bytes())
		})
	}
}

// TestWriteIsDeterministic writes each format twice from reports built in a different
// order: the output must not depend on map iteration or input order.
func TestWriteIsDeterministic(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			a := fixtureReport(t)
			b := fixtureReport(t)
			reverse(b)
			if err := Complete(b, FailOnNew); err != nil {
				t.Fatal(err)
			}
			var outA, outB bytes.Buffer
			if err := Write(&outA, a, f, Options{}); err != nil {
				t.Fatal(err)
			}
			if err := Write(&outB, b, f, Options{}); err != nil {
				t.Fatal(err)
			}
			if outA.String() != outB.String() {
				t.Errorf("output depends on the input order")
			}
		})
	}
}

func reverse(r *Report) {
	for _, s := range []interface{ reverse() }{
		reversible[Violation](r.Violations), reversible[Change](r.Changes), reversible[Problem](r.Problems),
		reversible[Warning](r.Warnings), reversible[Object](r.Objects), reversible[Rule](r.Rules), reversible[App](r.Apps),
	} {
		s.reverse()
	}
}

type reversible[T any] []T

func (s reversible[T]) reverse() {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

func TestWriteRefusesAReportThatWasNotCompleted(t *testing.T) {
	err := Write(&bytes.Buffer{}, &Report{}, FormatJSON, Options{})
	if err == nil || !strings.Contains(err.Error(), "Complete") {
		t.Fatalf("Write of an incomplete report: got %v, want an error naming Complete", err)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	err := Write(&bytes.Buffer{}, cleanReport(t), Format("yaml"), Options{})
	if !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("got %v, want ErrUnknownFormat", err)
	}
}

// failingWriter fails after n bytes, as a full disk or a closed pipe does.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteReportsWriteErrors(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			err := Write(&failingWriter{n: 100}, fixtureReport(t), f, Options{})
			if err == nil || !strings.Contains(err.Error(), "disk full") {
				t.Fatalf("got %v, want the writer's error", err)
			}
		})
	}
}

// TestMarkdownCollapsesLongProblemLists keeps the violations in view when many inputs
// fail: more than a handful of problems go into a collapsed block.
func TestMarkdownCollapsesLongProblemLists(t *testing.T) {
	for _, n := range []int{collapseProblemsOver, collapseProblemsOver + 1} {
		r := &Report{}
		for i := range n {
			r.Problems = append(r.Problems, Problem{File: fmt.Sprintf("apps/%d/kustomization.yaml", i), Message: "missing"})
		}
		if err := Complete(r, FailOnAll); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, r, FormatMarkdown, Options{}); err != nil {
			t.Fatal(err)
		}
		collapsed := strings.Contains(buf.String(), "<details><summary>"+fmt.Sprint(n)+" inputs could not be read or rendered</summary>")
		if collapsed != (n > collapseProblemsOver) {
			t.Errorf("%d problems: collapsed = %t\n%s", n, collapsed, buf.String())
		}
		if got := strings.Count(buf.String(), "| `apps/"); got != n {
			t.Errorf("%d problems: %d rows", n, got)
		}
	}
}
