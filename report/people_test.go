package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

func TestMDText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain words", "plain words"},
		{"a | b", `a \| b`},
		{"*bold* _em_ `code` ~strike~", `\*bold\* \_em\_ \` + "`code\\`" + ` \~strike\~`},
		{"<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"[link](http://x)", `\[link\](http://x)`},
		{"$x^2$ & &amp;", `\$x^2\$ \& \&amp;`},
		{`back\slash`, `back\\slash`},
		{"two\nlines\r\nand\rmore", "two<br>lines<br>and<br>more"},
		{"ask @team", "ask @\u200bteam"},
	}
	for _, tt := range tests {
		if got := mdText(tt.in); got != tt.want {
			t.Errorf("mdText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMDCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Subscription etcd/etcd", "`Subscription etcd/etcd`"},
		{"", ""},
		{"a|b", "`a\\|b`"},
		{"has `tick`", "`` has `tick` ``"},
		{"`starts", "`` `starts ``"},
		{"two ``ticks``", "``` two ``ticks`` ```"},
		{"multi\nline", "`multi line`"},
	}
	for _, tt := range tests {
		if got := mdCode(tt.in); got != tt.want {
			t.Errorf("mdCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// bigReport has many violations with long messages, as a first check of a large
// repository does.
func bigReport(t testing.TB, n int) *Report {
	t.Helper()
	r := &Report{Revision: Revision{Commit: "3f2a1c0d"}, Base: &Revision{Ref: "main"}, Rules: catalog()}
	for i := range n {
		status := StatusNew
		if i%2 == 0 {
			status = StatusPreExisting
		}
		r.Violations = append(r.Violations, Violation{
			Rule: "OP007", Severity: SeverityError, App: fmt.Sprintf("app-%04d", i%300),
			File: fmt.Sprintf("apps/app-%04d/subscription-%d.yaml", i%300, i), Line: 1 + i%40,
			Object:  ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "ns", Name: fmt.Sprintf("sub-%d", i)},
			Message: strings.Repeat("a Subscription in an individual app is in the app's destination namespace; ", 8),
			Status:  status,
		})
		r.Changes = append(r.Changes, Change{Type: ChangeModified, Object: ObjectRef{Kind: "Subscription", Name: fmt.Sprintf("sub-%d", i)},
			Fields: []FieldChange{{Path: "spec.channel", Old: "stable", New: "fast"}}})
	}
	if err := Complete(r, FailOnNew); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMarkdownFitsInAPullRequestComment(t *testing.T) {
	for _, n := range []int{10, 60, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, bigReport(t, n), FormatMarkdown, Options{}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if len(out) > maxComment {
				t.Errorf("comment has %d characters, want at most %d", len(out), maxComment)
			}
			rows := strings.Count(out, "\n| ❌ |")
			more := strings.Contains(out, "more: see the job log")
			if n <= maxTableRows && (rows != n || more) {
				t.Errorf("%d violations gave %d rows (more: %v), want them all", n, rows, more)
			}
			if n > maxTableRows && (!more || rows == 0) {
				t.Errorf("%d violations gave %d rows (more: %v), want some and a count of the rest", n, rows, more)
			}
			if !strings.HasPrefix(out, MarkdownMarker+"\n") {
				t.Errorf("comment does not start with the marker")
			}
		})
	}
}

// hostile is a report whose paths and messages try to break out of the text format.
func hostile(t *testing.T) *Report {
	r := &Report{
		Revision: Revision{Ref: "::add-mask::x"},
		Violations: []Violation{{
			Rule: "OP001", Severity: SeverityError, App: "::stop-commands::app",
			File: "::error::x.yaml", Line: 1, Object: subEtcd,
			Message: "\x1b[31mred\x1b[0m and a bell\a\n  ::warning file=a::injected\r\n\t::set-output name=x::y",
		}},
		Problems: []Problem{{File: "  ::notice::p.yaml", Message: "::error::problem"}},
		Warnings: []Warning{{File: "::debug::w", Message: "\u0085::error::after NEL"}},
	}
	if err := Complete(r, FailOnAll); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTextCannotInjectWorkflowCommandsOrEscapes checks that nothing from the report can
// open a line with "::" (GitHub's runner would run it, after trimming leading spaces) or
// reach the terminal as a control character, with and without colour.
func TestTextCannotInjectWorkflowCommandsOrEscapes(t *testing.T) {
	for _, color := range []bool{false, true} {
		t.Run(fmt.Sprintf("color=%v", color), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, hostile(t), FormatText, Options{Color: color, GroupBy: GroupByApp}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
					t.Errorf("line %q opens with a workflow command", line)
				}
			}
			stripped := out
			if color {
				for _, code := range []string{ansiReset, ansiBold, ansiDim, ansiRed, ansiGreen, ansiYellow, ansiCyan} {
					stripped = strings.ReplaceAll(stripped, code, "")
				}
			}
			if i := strings.IndexFunc(stripped, isEscapedControl); i >= 0 {
				t.Errorf("control character %q reaches the output at %d: %q", stripped[i], i, stripped[max(0, i-20):min(len(stripped), i+20)])
			}
			for _, want := range []string{`\x1b[31mred`, `bell\a`, "::warning file=a::injected", "::error::x.yaml"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lost %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestTextColourOnlyWhenAsked(t *testing.T) {
	var plainOut, colorOut bytes.Buffer
	if err := Write(&plainOut, fixtureReport(t), FormatText, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&colorOut, fixtureReport(t), FormatText, Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plainOut.String(), "\x1b[") {
		t.Error("text without Color has ANSI escapes")
	}
	if !strings.Contains(colorOut.String(), ansiRed+ansiBold+"error  "+ansiReset) {
		t.Error("text with Color does not paint errors red")
	}
	for _, code := range []string{ansiReset, ansiBold, ansiDim, ansiRed, ansiGreen, ansiYellow, ansiCyan} {
		colorOut = *bytes.NewBufferString(strings.ReplaceAll(colorOut.String(), code, ""))
	}
	if colorOut.String() != plainOut.String() {
		t.Error("colour changes the text, not only its colour")
	}
}
