package report

import (
	"cmp"
	"encoding/xml"
	"io"
	"maps"
	"slices"
	"strings"
)

// The JUnit XML shape GitLab, Jenkins and most test report viewers read.
type junitTestsuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitOutcome `xml:"failure,omitempty"`
	Error     *junitOutcome `xml:"error,omitempty"`
	Skipped   *junitOutcome `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`

	// Where the case's object is, to order the cases; not written.
	line int
}

type junitOutcome struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes one test case per object and rule: failed when the object violates
// the rule (the failure's type is the severity), skipped when every such violation is
// waived, passed for a checked object the rule looks at without a violation (when the
// report lists checked objects). Inputs that could not be rendered are test cases in
// error. Test suites are apps, or rules or files as opts.GroupBy says.
func writeJUnit(w io.Writer, r *Report, opts Options) error {
	by := cmp.Or(opts.GroupBy, GroupByApp)
	j := junitBuilder{r: r, by: by, cases: map[junitKey]*junitCase{}, violations: map[junitKey][]Violation{}}
	for _, v := range r.Violations {
		if v.Status != StatusUnknown { // the base's, in an app that did not render: its problem is the test case
			j.addViolation(v)
		}
	}
	for _, o := range r.Objects {
		j.addPassed(o)
	}
	for _, p := range r.Problems {
		j.addProblem(p)
	}
	for _, w := range r.Warnings {
		if w.Unchecked {
			j.addUnchecked(w)
		}
	}
	doc := j.document()
	if suite := bringsSuite(r); suite != nil {
		doc.Suites = append(doc.Suites, *suite)
		doc.Tests += suite.Tests
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitKey identifies a test case: its suite, rule and object.
type junitKey struct {
	suite, rule, object string
}

type junitBuilder struct {
	r          *Report
	by         GroupBy
	cases      map[junitKey]*junitCase
	violations map[junitKey][]Violation
}

func (j *junitBuilder) suiteOf(app, rule, file string) string {
	switch j.by {
	case GroupByRule:
		return cmp.Or(rule, "input")
	case GroupByFile:
		return cmp.Or(file, "(no file)")
	default:
		return cmp.Or(app, "(no app)")
	}
}

func (j *junitBuilder) caseFor(k junitKey, name, file string, line int) *junitCase {
	c, ok := j.cases[k]
	if !ok {
		c = &junitCase{Name: name, Classname: k.suite, File: file, Time: "0", line: line}
		j.cases[k] = c
	}
	return c
}

func (j *junitBuilder) addViolation(v Violation) {
	k := junitKey{suite: j.suiteOf(v.App, v.Rule, v.File), rule: v.Rule, object: keyOf(v).object + keyOf(v).file}
	c := j.caseFor(k, caseName(v.Rule, v.Object, v.File), v.File, v.Line)
	j.violations[k] = append(j.violations[k], v)
	j.settle(c, j.violations[k])
}

// settle decides a case from all its violations: a failure if any is not waived (of the
// highest severity among those), else skipped.
func (j *junitBuilder) settle(c *junitCase, vs []Violation) {
	c.Failure, c.Skipped, c.SystemOut = nil, nil, ""
	var open, waived []Violation
	for _, v := range vs {
		if v.Waived {
			waived = append(waived, v)
		} else {
			open = append(open, v)
		}
	}
	var notes []string
	for _, v := range waived {
		notes = append(notes, junitDetail(v))
	}
	if len(open) == 0 {
		c.Skipped = &junitOutcome{Message: waiverText(waived[0].Waiver)}
		c.SystemOut = strings.Join(notes, "\n")
		return
	}
	worst := slices.MinFunc(open, func(a, b Violation) int {
		return cmp.Compare(severityRank(a.Severity), severityRank(b.Severity))
	})
	details := make([]string, 0, len(open))
	for _, v := range open {
		details = append(details, junitDetail(v))
	}
	c.Failure = &junitOutcome{Message: worst.Message, Type: string(worst.Severity), Text: strings.Join(details, "\n")}
	c.SystemOut = strings.Join(notes, "\n")
}

// junitDetail is one violation in a case's body: what, where, and its status.
func junitDetail(v Violation) string {
	head := string(v.Severity) + " " + v.Rule
	if loc := location(v.File, v.Line); loc != "" {
		head += " at " + loc
	}
	var tags []string
	switch {
	case len(v.Apps) > 1:
		tags = append(tags, "apps "+v.AppsLabel())
	case v.App != "":
		tags = append(tags, "app "+v.App)
	}
	if v.Status != "" {
		tags = append(tags, string(v.Status))
	}
	if v.Waived {
		tags = append(tags, waiverText(v.Waiver))
	}
	if len(tags) > 0 {
		head += " (" + strings.Join(tags, ", ") + ")"
	}
	return head + "\n" + v.Message + "\n"
}

// addPassed adds a passed case for every rule that looks at the object's kind and has not
// already given it a case.
func (j *junitBuilder) addPassed(o Object) {
	for _, rule := range j.r.Rules {
		if !slices.Contains(rule.Kinds, o.Object.Kind) && !slices.Contains(rule.Kinds, "*") {
			continue
		}
		k := junitKey{suite: j.suiteOf(o.App, rule.ID, o.File), rule: rule.ID, object: o.Object.identity()}
		j.caseFor(k, caseName(rule.ID, o.Object, o.File), o.File, o.Line)
	}
}

// addUnchecked is an unchecked change: a skipped test case, since nothing checked it.
func (j *junitBuilder) addUnchecked(w Warning) {
	name := "unchecked change: " + w.File
	k := junitKey{suite: j.suiteOf("(unchecked changes)", "", w.File), object: name}
	c := j.caseFor(k, name, w.File, w.Line)
	c.Skipped = &junitOutcome{Message: withHint(w.Message, w.Hint)}
}

func (j *junitBuilder) addProblem(p Problem) {
	what := location(p.File, p.Line)
	if what == "" && p.App != "" {
		what = "app " + p.App
	}
	name := "render " + cmp.Or(what, "input")
	if p.Base {
		name = "render base revision: " + cmp.Or(what, "input")
	}
	k := junitKey{suite: j.suiteOf(p.App, "", p.File), object: name}
	c := j.caseFor(k, name, p.File, p.Line)
	if p.Base {
		// The base only decides what is new; the checked revision is what is tested.
		c.Skipped = &junitOutcome{Message: "the base revision could not be read or rendered: " + p.Message}
		return
	}
	text := withApps(p)
	if c.Error != nil {
		// Two problems at one place: keep both.
		text = c.Error.Text + "\n" + text
	}
	c.Error = &junitOutcome{Message: cmp.Or(c.errorMessage(), p.Message), Type: "problem", Text: text}
}

// errorMessage is the message of the case's error so far, if any.
func (c *junitCase) errorMessage() string {
	if c.Error == nil {
		return ""
	}
	return c.Error.Message
}

func caseName(rule string, obj ObjectRef, file string) string {
	if obj.IsZero() {
		return rule + " " + file
	}
	return rule + " " + obj.String()
}

// document assembles the suites in name order, and the cases of a suite in file order.
func (j *junitBuilder) document() junitTestsuites {
	bySuite := map[string][]junitCase{}
	if j.by == GroupByApp {
		// Every app is a suite, even one with nothing to test, so that the report shows
		// what was checked.
		for _, app := range j.r.Apps {
			bySuite[app.Name] = nil
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(j.cases), compareJUnitKeys) {
		bySuite[k.suite] = append(bySuite[k.suite], *j.cases[k])
	}
	doc := junitTestsuites{Name: "olmsync"}
	for _, name := range slices.Sorted(maps.Keys(bySuite)) {
		cases := bySuite[name]
		slices.SortStableFunc(cases, func(a, b junitCase) int {
			return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.line, b.line))
		})
		s := junitSuite{Name: name, Cases: cases, Properties: j.properties()}
		for _, c := range cases {
			s.Tests++
			switch {
			case c.Error != nil:
				s.Errors++
			case c.Failure != nil:
				s.Failures++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	return doc
}

func compareJUnitKeys(a, b junitKey) int {
	return cmp.Or(cmp.Compare(a.suite, b.suite), cmp.Compare(a.object, b.object), cmp.Compare(a.rule, b.rule))
}

// properties record the revisions a suite was checked at.
func (j *junitBuilder) properties() []junitProperty {
	props := []junitProperty{{Name: "revision", Value: j.r.Revision.String()}}
	if j.r.Base != nil {
		props = append(props, junitProperty{Name: "base", Value: j.r.Base.String()})
	}
	if lib := libraryLine(j.r); lib != "" {
		props = append(props, junitProperty{Name: "libraryRoots", Value: lib})
	}
	return props
}

// bringsSuite is the OLM preview's "what the Subscriptions bring", one passed test case
// per Subscription that installs or upgrades, its CRDs, permissions and images in the
// case's output: what a reviewer reads in the test report of a merge request. Nil without
// a preview.
func bringsSuite(r *Report) *junitSuite {
	suite := &junitSuite{Name: "olmsync: what the Subscriptions bring"}
	for _, s := range r.Subscriptions {
		lines := bringsLines(s.Brings)
		if len(lines) == 0 {
			continue
		}
		name := s.ID() + " brings " + s.Brings.CSV
		if s.Cluster != "" {
			name = s.Cluster + ": " + name
		}
		suite.Cases = append(suite.Cases, junitCase{Name: name, Classname: "olm-preview", File: s.File, Time: "0",
			SystemOut: strings.Join(lines, "\n")})
	}
	if len(suite.Cases) == 0 {
		return nil
	}
	suite.Tests = len(suite.Cases)
	return suite
}
