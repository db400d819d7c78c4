package report

import (
	"bytes"
	"strings"
	"testing"
)

// unsafeNotDefusing is isUnsafeRune but for the zero-width space the text and Markdown
// writers put before a "::" themselves (so that no line opens a workflow command).
func unsafeNotDefusing(c rune) bool { return c != '\u200b' && isUnsafeRune(c) }

// TestFormatsEscapeInjection: an object named with a line break and a workflow command,
// an escape sequence and a right-to-left override was defused in text, but `-o github`
// wrote the raw ESC byte and `-o markdown` put it into its table (issue 30). Every format
// a person reads writes such characters out; JSON escapes control characters itself.
func TestFormatsEscapeInjection(t *testing.T) {
	name := "etcd\n::error title=INJECTED::owned\x1b[31m\u202eevil"
	r := &Report{
		Revision: Revision{Ref: "main"},
		Violations: []Violation{{
			Rule: "OP001", Severity: SeverityError, App: "team-\u202ea", File: "apps/\x1b[2Jsub.yaml", Line: 3,
			Object:  ObjectRef{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "ns", Name: name},
			Message: "Subscription " + name + " is wrong",
		}},
		Problems: []Problem{{File: "apps/\u2066x.yaml", Message: "bad \u009b1m \u200b"}},
	}
	if err := Complete(r, FailOnAll); err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats() {
		var buf bytes.Buffer
		if err := Write(&buf, r, format, Options{}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if format == FormatJSON {
			if strings.ContainsRune(out, '\x1b') {
				t.Errorf("json: a raw ESC")
			}
			continue
		}
		if i := strings.IndexFunc(out, unsafeNotDefusing); i >= 0 {
			t.Errorf("%s: unsafe character %q at %d:\n%s", format, []rune(out[i:])[0], i, out)
		}
		if !strings.Contains(out, `\x1b`) && !strings.Contains(out, `\\x1b`) {
			t.Errorf("%s: the escape sequence is not written out:\n%s", format, out)
		}
		if format == FormatGitHub {
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "title=INJECTED") && strings.HasPrefix(line, "::error title=INJECTED") {
					t.Errorf("github: the name opened a workflow command: %q", line)
				}
			}
		}
	}
}
