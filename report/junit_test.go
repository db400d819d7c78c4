package report

import (
	"bytes"
	"encoding/xml"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The JUnit document as a reader sees it, decoded with the test's own types.
type junitRead struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			File      string `xml:"file,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, r *Report, opts Options) junitRead {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatJUnit, opts); err != nil {
		t.Fatal(err)
	}
	var doc junitRead
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit output does not parse: %v\n%s", err, buf.String())
	}
	return doc
}

// TestJUnitParsesBack reads the JUnit output back and checks it case by case against the
// report: a failure per object and rule with violations that are not waived (message and
// severity intact, special characters included), skipped cases for waived ones and for the
// base revision's problems, an error per problem, a passed case for every checked object
// each rule looks at, and counts that add up.
func TestJUnitParsesBack(t *testing.T) {
	r := fixtureReport(t)
	doc := readJUnit(t, r, Options{})

	type outcome struct{ suite, name, result, detail string }
	var got []outcome
	tests, failures, errs, skipped := 0, 0, 0, 0
	for _, s := range doc.Suites {
		var sf, se, ss int
		for _, c := range s.Cases {
			if c.Classname != s.Name {
				t.Errorf("case %q has classname %q in suite %q", c.Name, c.Classname, s.Name)
			}
			o := outcome{suite: s.Name, name: c.Name, result: "passed"}
			switch {
			case c.Failure != nil:
				o.result, o.detail = "failure/"+c.Failure.Type, c.Failure.Message
				sf++
			case c.Error != nil:
				o.result, o.detail = "error", c.Error.Message
				se++
			case c.Skipped != nil:
				o.result, o.detail = "skipped", c.Skipped.Message
				ss++
			}
			got = append(got, o)
		}
		if s.Tests != len(s.Cases) || s.Failures != sf || s.Errors != se || s.Skipped != ss {
			t.Errorf("suite %s counts tests=%d failures=%d errors=%d skipped=%d, cases say %d/%d/%d/%d",
				s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), sf, se, ss)
		}
		tests, failures, errs, skipped = tests+s.Tests, failures+s.Failures, errs+s.Errors, skipped+s.Skipped
	}
	if doc.Tests != tests || doc.Failures != failures || doc.Errors != errs || doc.Skipped != skipped {
		t.Errorf("testsuites counts %d/%d/%d/%d, suites add up to %d/%d/%d/%d",
			doc.Tests, doc.Failures, doc.Errors, doc.Skipped, tests, failures, errs, skipped)
	}

	var failed []outcome
	for _, o := range got {
		if o.result != "passed" {
			failed = append(failed, o)
		}
	}
	r = sanitized(r) // what the cases say is the report's, its unsafe characters written out
	msg := func(rule string, obj ObjectRef) string {
		for _, v := range r.Violations {
			if v.Rule == rule && v.Object == obj {
				return v.Message
			}
		}
		t.Fatalf("no violation %s %s in the fixture", rule, obj)
		return ""
	}
	want := []outcome{
		{"broken", "render apps/broken/kustomization.yaml:7", "error", r.Problems[0].Message},
		{"cluster-scope", "OP002 " + ogLog.String(), "failure/error", msg("OP002", ogLog)},
		{"cluster-scope", "OP009 " + csvLog.String(), "failure/warning", msg("OP009", csvLog)},
		{"etcd", "CUSTOM-1 " + cmApp.String(), "failure/warning", msg("CUSTOM-1", cmApp)},
		{"etcd", "OP007 " + subEtcd.String(), "failure/error", msg("OP007", subEtcd)},
		{"legacy", "render base revision: apps/legacy/kustomization.yaml", "skipped", "the base revision could not be read or rendered: " + r.Problems[1].Message},
		{"odh", "OP009 " + csvOdh.String(), "skipped", "waived: pinned until ODH 2.5 ships (annotation)"},
		{"odh", "OP010 " + ipOdh.String(), "skipped", "waived: reviewed by platform team, see OPS-1234 (olmsync.yaml, expires 2027-03-31)"},
		{"odh", "OP005 " + subOdh.String(), "failure/error", msg("OP005", subOdh)},
	}
	if diff := cmp.Diff(want, failed, cmp.AllowUnexported(outcome{})); diff != "" {
		t.Errorf("cases that did not pass (-want +got):\n%s", diff)
	}

	// Every checked object gets a case for each rule whose kinds include it.
	for _, o := range r.Objects {
		for _, rule := range r.Rules {
			if !slices.Contains(rule.Kinds, o.Object.Kind) {
				continue
			}
			name := rule.ID + " " + o.Object.String()
			if !slices.ContainsFunc(got, func(g outcome) bool { return g.suite == o.App && g.name == name }) {
				t.Errorf("no case %q in suite %s", name, o.App)
			}
		}
	}
	// The rule missing from the catalog has no kinds: it gets cases only where it failed.
	for _, o := range got {
		if o.name == "CUSTOM-1 "+nsEtcd.String() {
			t.Errorf("a rule with unknown kinds got a passed case: %v", o)
		}
	}
}

func TestJUnitGroupsByRule(t *testing.T) {
	doc := readJUnit(t, fixtureReport(t), Options{GroupBy: GroupByRule})
	var names []string
	for _, s := range doc.Suites {
		names = append(names, s.Name)
		for _, c := range s.Cases {
			if s.Name != "input" && c.Name[:len(s.Name)] != s.Name {
				t.Errorf("case %q in suite %q", c.Name, s.Name)
			}
		}
	}
	want := []string{"CUSTOM-1", "OP002", "OP005", "OP007", "OP009", "OP010", "input"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("suites (-want +got):\n%s", diff)
	}
}

func TestJUnitListsEveryAppAsASuite(t *testing.T) {
	doc := readJUnit(t, cleanReport(t), Options{})
	if len(doc.Suites) != 1 || doc.Suites[0].Name != "cluster-scope" || doc.Tests != 0 {
		t.Errorf("got %+v, want one empty suite for the one app", doc)
	}
}

func TestJUnitProblems(t *testing.T) {
	r := &Report{Problems: []Problem{
		{App: "a", File: "apps/a/kustomization.yaml", Line: 4, Message: "first"},
		{App: "a", File: "apps/a/kustomization.yaml", Line: 4, Message: "second"},
		{App: "b", Message: "app b has no path"},
		{Message: "olmsync.yaml: unknown field"},
	}}
	if err := Complete(r, FailOnAll); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatJUnit, Options{}); err != nil {
		t.Fatal(err)
	}
	doc := readJUnit(t, r, Options{})
	type errCase struct{ suite, name, message string }
	var got []errCase
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Error == nil {
				t.Errorf("case %q is not an error", c.Name)
				continue
			}
			got = append(got, errCase{s.Name, c.Name, c.Error.Message})
		}
	}
	want := []errCase{
		{"(no app)", "render input", "olmsync.yaml: unknown field"},
		{"a", "render apps/a/kustomization.yaml:4", "first"},
		{"b", "render app b", "app b has no path"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(errCase{})); diff != "" {
		t.Errorf("error cases (-want +got):\n%s", diff)
	}
	if !bytes.Contains(buf.Bytes(), []byte("app a: first&#xA;app a: second")) {
		t.Errorf("the two problems at one place are not both kept:\n%s", buf.String())
	}
	if doc.Errors != 3 {
		t.Errorf("%d errors, want 3", doc.Errors)
	}
}
