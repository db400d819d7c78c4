package report

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/owenrumney/go-sarif/v2/sarif"
)

const (
	// sarifSchemaURI is the schema GitHub's documentation names for SARIF 2.1.0.
	sarifSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"
	// InformationURI is olmsync's home, given to SARIF viewers.
	InformationURI = "https://github.com/olmsync/olmsync"
)

// GitHub code scanning's limits on an uploaded SARIF file: more results in a run, and the
// upload is rejected; a longer name or description is cut.
const (
	maxSARIFResults     = 25000
	maxSARIFDescription = 1024
	maxSARIFRuleName    = 255
)

// fingerprintKey is olmsync's own partial fingerprint, versioned as SARIF suggests.
const fingerprintKey = "olmsyncViolation/v1"

// go-sarif v2 writes a suppression's location, guid and justification whether set or not,
// unset ones as null, which the SARIF schema refuses; a waiver has no GUID, and one in
// olmsync.yaml no location in the report. So suppressions are olmsync's own type, and these
// wrappers only put them in place of go-sarif's (a field of the outer struct hides the
// embedded one of the same JSON name): everything else in the log, its run and each result
// is go-sarif's, written as go-sarif writes it.
type (
	sarifLog struct {
		*sarif.Report
		Runs []sarifRun `json:"runs"`
	}
	sarifRun struct {
		*sarif.Run
		Results []sarifResult `json:"results"`
	}
	sarifResult struct {
		*sarif.Result
		Suppressions []sarifSuppression `json:"suppressions,omitempty"`
	}
	sarifSuppression struct {
		Kind          string `json:"kind"`
		Status        string `json:"status"`
		Justification string `json:"justification,omitempty"`
	}
)

func writeSARIF(w io.Writer, r *Report, opts Options) error {
	log, err := buildSARIF(r, maxSARIFResults, opts.PathPrefix)
	if err != nil {
		return err
	}
	// Not go-sarif's PrettyWrite: it escapes <, > and & in messages and Markdown help.
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

// buildSARIF converts a report into a SARIF log with one run: the rule catalog as the
// driver's rules, each violation as a result (waived ones as suppressed notes), and the
// problems and render warnings as notifications of the run's invocation. At most limit
// results are kept, the most important first. Artifact locations start with prefix.
func buildSARIF(r *Report, limit int, prefix string) (sarifLog, error) {
	report, err := sarif.New(sarif.Version210)
	if err != nil {
		return sarifLog{}, err
	}
	report.Schema = sarifSchemaURI
	loc := locator(prefix)

	driver := sarif.NewDriver(cmp.Or(r.Tool.Name, "olmsync")).WithInformationURI(InformationURI)
	if r.Tool.Version != "" {
		driver.WithVersion(r.Tool.Version)
	}
	// GitHub prefers semanticVersion; only a real semantic version may go there.
	if v, err := semver.Parse(strings.TrimPrefix(r.Tool.Version, "v")); err == nil {
		driver.WithSemanticVersion(v.String())
	}
	ruleIndex := map[string]int{}
	for i, rule := range r.Rules {
		driver.Rules = append(driver.Rules, toSARIFRule(rule))
		ruleIndex[rule.ID] = i
	}
	run := sarif.NewRun(*sarif.NewTool(driver))
	report.AddRun(run)

	vs := byImportance(r.Violations)
	for _, v := range r.Violations {
		if v.Waived && v.Status != StatusUnknown {
			vs = append(vs, v)
		}
	}
	dropped := 0
	if len(vs) > limit {
		vs, dropped = vs[:limit], len(vs)-limit
	}
	results := make([]sarifResult, 0, len(vs))
	occurrences := map[violationKey]int{}
	for _, v := range vs {
		occurrences[keyOf(v)]++
		res := toSARIFResult(v, occurrences[keyOf(v)], loc)
		// Complete puts every violation's rule in the catalog; go-sarif's AddResult would
		// write -1 as an unsigned index for one that is not.
		if i, ok := ruleIndex[v.Rule]; ok {
			res.WithRuleIndex(i)
		}
		results = append(results, res)
	}
	addSARIFInvocation(run, r, dropped, loc)
	return sarifLog{Report: report, Runs: []sarifRun{{Run: run, Results: results}}}, nil
}

func toSARIFRule(rule Rule) *sarif.ReportingDescriptor {
	help := cmp.Or(rule.Help, rule.Description, rule.Title)
	markdown := help
	if rule.HelpURI != "" {
		markdown += "\n\n[Documentation](" + rule.HelpURI + ")"
	}
	tags := []string{"olmsync", "olm"}
	if rule.Custom {
		tags = append(tags, "custom")
	}
	d := sarif.NewRule(rule.ID).
		WithName(truncate(rule.Title, maxSARIFRuleName)).
		WithDescription(truncate(rule.Title, maxSARIFDescription)).
		WithFullDescription(sarif.NewMultiformatMessageString(truncate(cmp.Or(rule.Description, rule.Title), maxSARIFDescription))).
		WithHelp(sarif.NewMultiformatMessageString(help).WithMarkdown(markdown)).
		WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(string(rule.Severity))).
		WithProperties(sarif.Properties{"tags": tags, "precision": "very-high", "problem.severity": string(rule.Severity)})
	if rule.HelpURI != "" {
		d.WithHelpURI(rule.HelpURI)
	}
	return d
}

// toSARIFResult converts one violation. occurrence counts the violations with the same
// identity so far, so that each gets its own fingerprint.
func toSARIFResult(v Violation, occurrence int, loc locator) sarifResult {
	props := sarif.Properties{"severity": v.Severity}
	if v.App != "" {
		props["app"] = v.App
	}
	if len(v.Apps) > 1 {
		apps := make([]string, len(v.Apps))
		for i, a := range v.Apps {
			apps[i] = a.String()
		}
		props["apps"] = apps
	}
	if v.Cluster != "" {
		props["cluster"] = v.Cluster
	}
	if !v.Object.IsZero() {
		props["object"] = v.Object
	}
	level := string(v.Severity)
	var suppressions []sarifSuppression
	if v.Waived {
		props["waived"] = true
		// GitHub code scanning ignores suppressions and would list a waived violation as
		// an open alert at its full level; as a note it stays visible but quiet.
		level = "note"
		suppressions = []sarifSuppression{toSARIFSuppression(v.Waiver)}
	}
	res := sarif.NewRuleResult(v.Rule).
		WithLevel(level).
		WithMessage(sarif.NewTextMessage(violationText(v))).
		WithLocations([]*sarif.Location{loc.location(v.File, v.Line)}).
		WithPartialFingerPrints(fingerprints(v, occurrence))
	res.Properties = props
	switch v.Status {
	case StatusNew:
		res.WithBaselineState("new")
	case StatusPreExisting:
		res.WithBaselineState("unchanged")
	}
	return sarifResult{Result: res, Suppressions: suppressions}
}

func toSARIFSuppression(w *Waiver) sarifSuppression {
	// An annotation lives in the manifest ("inSource"); a waiver in olmsync.yaml lives
	// beside it ("external").
	s := sarifSuppression{Kind: "external", Status: "accepted"}
	if w != nil {
		if w.Source == WaiverAnnotation {
			s.Kind = "inSource"
		}
		s.Justification = w.Reason
	}
	return s
}

// fingerprints identify a violation across runs by rule, app and object, never by line,
// so that GitHub keeps one alert when the object moves within its file. GitHub reads only
// primaryLocationLineHash, in its "<hash>:<occurrence>" shape.
func fingerprints(v Violation, occurrence int) map[string]any {
	k := keyOf(v)
	sum := sha256.Sum256([]byte(strings.Join([]string{k.rule, k.app, k.object, k.file}, "\x00")))
	full := hex.EncodeToString(sum[:])
	return map[string]any{
		"primaryLocationLineHash": fmt.Sprintf("%s:%d", full[:16], occurrence),
		fingerprintKey:            fmt.Sprintf("%s:%d", full, occurrence),
	}
}

// locator is the checked folder's path inside its repository: every location starts with
// it, as code scanning resolves locations against the repository's top.
type locator string

func (prefix locator) location(file string, line int) *sarif.Location {
	if p := strings.Trim(string(prefix), "/"); p != "" && p != "." {
		if rel := strings.TrimLeft(file, "/"); rel != "" {
			file = p + "/" + rel
		} else {
			file = p
		}
	}
	return sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().
		WithArtifactLocation(sarif.NewSimpleArtifactLocation(artifactURI(file))).
		// GitHub needs a line to place an alert; 1 stands for "somewhere in the file".
		WithRegion(sarif.NewRegion().WithStartLine(max(line, 1))))
}

// artifactURI writes a repository-relative path as a relative URI reference: each segment
// percent-encoded, and ':' too, so that "a:b/c.yaml" is not read as a URI scheme. Leading
// slashes are dropped: "//x" would be read as a host.
func artifactURI(file string) string {
	file = strings.TrimLeft(file, "/")
	if file == "" {
		return "."
	}
	segments := strings.Split(file, "/")
	for i, s := range segments {
		segments[i] = strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
	}
	return strings.Join(segments, "/")
}

// addSARIFInvocation reports what kept the run from seeing everything: problems (errors
// for the checked revision, warnings for the base), render warnings, and results left out
// to stay within GitHub's limit; and, as notes, what the OLM preview's Subscriptions bring.
func addSARIFInvocation(run *sarif.Run, r *Report, dropped int, loc locator) {
	inv := run.AddInvocation(r.Summary.Result != ResultIncomplete)
	notify := func(level, message, file string, line int) {
		n := sarif.NewNotification().WithLevel(level).WithTextMessage(message)
		if file != "" {
			n.WithLocations([]*sarif.Location{loc.location(file, line)})
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	for _, p := range r.Problems {
		level := "error"
		if p.Base {
			level = "warning"
		}
		notify(level, withApps(p), p.File, p.Line)
	}
	for _, w := range r.Warnings {
		notify("warning", w.Message, w.File, w.Line)
	}
	// What each Subscription brings (the OLM preview): notes on its line, not results, as
	// they are no finding.
	for _, sp := range r.Subscriptions {
		if lines := bringsLines(sp.Brings); len(lines) > 0 {
			notify("note", "Subscription "+sp.ID()+" brings "+sp.Brings.CSV+":\n"+strings.Join(lines, "\n"), sp.File, sp.Line)
		}
	}
	if lib := libraryLine(r); lib != "" {
		notify("note", lib, "", 0)
	}
	if dropped > 0 {
		notify("warning", fmt.Sprintf("%d results left out: GitHub code scanning accepts at most %d per run; the JSON report has them all",
			dropped, maxSARIFResults), "", 0)
	}
}
