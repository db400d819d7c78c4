package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzWriters feeds arbitrary messages, paths and names, which come from the repository
// under check, through every writer and checks what each format must guarantee whatever
// they hold: JSON and SARIF stay valid and keep the text, JUnit stays well-formed XML,
// GitHub gets exactly one command per finding with its text intact, Markdown one table
// row, and text neither opens a line with a workflow command nor passes a control
// character through.
func FuzzWriters(f *testing.F) {
	f.Add("plain message", "apps/etcd/subscription.yaml", "etcd", 3)
	f.Add("two\nlines: 100%, a,b\r\n::error::x", "cluster-scope/logging: 100%, v5.yaml", "::app", 0)
	f.Add("\x1b[31m<b>|@team|</b>\x00\ufeff", "a b/c#d?.yaml", "", -1)
	f.Add("\xff\xfe invalid UTF-8", "\xffbad/path", "app\n", 1)
	f.Add("x\n::error title=INJECTED::owned\x1b]8;;http://evil\x07", "a\u202e/lmay.cs", "te\u0430m\u200b", 2)
	f.Fuzz(func(t *testing.T, message, file, app string, line int) {
		r := &Report{
			Revision: Revision{Ref: "main"},
			Violations: []Violation{{
				Rule: "OP001", Severity: SeverityError, App: app, File: file, Line: line,
				Object: ObjectRef{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: "ns", Name: "og"}, Message: message,
			}},
		}
		if err := Complete(r, FailOnAll); err != nil {
			t.Fatal(err)
		}
		out := map[Format]string{}
		for _, format := range Formats() {
			var buf bytes.Buffer
			if err := Write(&buf, r, format, Options{}); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			out[format] = buf.String()
		}

		var doc Report
		if err := json.Unmarshal([]byte(out[FormatJSON]), &doc); err != nil {
			t.Fatalf("json: %v", err)
		}
		if utf8.ValidString(message) && doc.Violations[0].Message != message {
			t.Errorf("json: message %q came back as %q", message, doc.Violations[0].Message)
		}

		var log sarifDoc
		if err := json.Unmarshal([]byte(out[FormatSARIF]), &log); err != nil {
			t.Fatalf("sarif: %v", err)
		}
		res := log.Runs[0].Results[0]
		if u, err := url.Parse(res.Locations[0].PhysicalLocation.ArtifactLocation.URI); err != nil || u.IsAbs() {
			t.Errorf("sarif: uri %q is not a relative reference: %v", res.Locations[0].PhysicalLocation.ArtifactLocation.URI, err)
		}
		if res.Locations[0].PhysicalLocation.Region.StartLine < 1 {
			t.Errorf("sarif: startLine %d", res.Locations[0].PhysicalLocation.Region.StartLine)
		}

		var junit junitRead
		if err := xml.Unmarshal([]byte(out[FormatJUnit]), &junit); err != nil {
			t.Fatalf("junit: %v\n%s", err, out[FormatJUnit])
		}
		if junit.Failures != 1 {
			t.Errorf("junit: %d failures, want 1", junit.Failures)
		}

		lines := strings.Split(strings.TrimSuffix(out[FormatGitHub], "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("github: %d lines, want one command and the summary:\n%s", len(lines), out[FormatGitHub])
		}
		cmd := parseWorkflowCommand(t, lines[0])
		if safe := sanitized(r).Violations[0]; cmd.message != violationText(safe) || cmd.props["file"] != safe.File {
			t.Errorf("github: command reads back as %+v", cmd)
		}

		if rows := strings.Count(out[FormatMarkdown], "\n| ❌ |"); rows != 1 {
			t.Errorf("markdown: %d violation rows, want 1:\n%s", rows, out[FormatMarkdown])
		}

		for _, l := range strings.Split(out[FormatText], "\n") {
			if strings.HasPrefix(strings.TrimLeftFunc(l, unicode.IsSpace), "::") {
				t.Errorf("text: line %q opens with a workflow command", l)
			}
		}
		if i := strings.IndexFunc(out[FormatText], isEscapedControl); i >= 0 {
			t.Errorf("text: control character at %d", i)
		}
		// No format a person reads holds a control or bidirectional character the input
		// put there (issue 30).
		for _, format := range Formats() {
			if i := strings.IndexFunc(out[format], unsafeNotDefusing); format != FormatJSON && i >= 0 {
				t.Errorf("%s: unsafe character %q at %d", format, []rune(out[format][i:])[0], i)
			}
		}
	})
}
