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

// The subset of SARIF 2.1.0 that GitHub code scanning reads ("SARIF support for code
// scanning"), and nothing else: a library's defaults (location ids of -1, empty arrays)
// would only add noise and values GitHub documents as out of range. The tests validate
// what these write against the official schema.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool        sarifTool         `json:"tool"`
		Invocations []sarifInvocation `json:"invocations"`
		Results     []sarifResult     `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name            string      `json:"name"`
		Version         string      `json:"version,omitempty"`
		SemanticVersion string      `json:"semanticVersion,omitempty"`
		InformationURI  string      `json:"informationUri"`
		Rules           []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string             `json:"id"`
		Name                 string             `json:"name"`
		ShortDescription     sarifMessage       `json:"shortDescription"`
		FullDescription      sarifMessage       `json:"fullDescription"`
		Help                 sarifMessage       `json:"help"`
		HelpURI              string             `json:"helpUri,omitempty"`
		DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
		Properties           sarifRuleProps     `json:"properties"`
	}
	sarifMessage struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown,omitempty"`
	}
	sarifConfiguration struct {
		Level string `json:"level"`
	}
	sarifRuleProps struct {
		Tags            []string `json:"tags"`
		Precision       string   `json:"precision"`
		ProblemSeverity string   `json:"problem.severity"`
	}
	sarifResult struct {
		RuleID              string             `json:"ruleId"`
		RuleIndex           int                `json:"ruleIndex"`
		Level               string             `json:"level"`
		Message             sarifMessage       `json:"message"`
		Locations           []sarifLocation    `json:"locations"`
		PartialFingerprints map[string]string  `json:"partialFingerprints"`
		BaselineState       string             `json:"baselineState,omitempty"`
		Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
		Properties          sarifResultProps   `json:"properties"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
	}
	sarifPhysicalLocation struct {
		ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
		Region           sarifRegion           `json:"region"`
	}
	sarifArtifactLocation struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
	sarifSuppression struct {
		Kind          string `json:"kind"`
		Status        string `json:"status"`
		Justification string `json:"justification,omitempty"`
	}
	sarifResultProps struct {
		App      string     `json:"app,omitempty"`
		Cluster  string     `json:"cluster,omitempty"`
		Object   *ObjectRef `json:"object,omitempty"`
		Severity Severity   `json:"severity"`
		Waived   bool       `json:"waived,omitempty"`
	}
	sarifInvocation struct {
		ExecutionSuccessful        bool                `json:"executionSuccessful"`
		ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	}
	sarifNotification struct {
		Level     string          `json:"level"`
		Message   sarifMessage    `json:"message"`
		Locations []sarifLocation `json:"locations,omitempty"`
	}
)

func writeSARIF(w io.Writer, r *Report, opts Options) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	log := buildSARIF(r, maxSARIFResults)
	log.prefixPaths(opts.PathPrefix)
	return enc.Encode(log)
}

// prefixPaths makes every artifact location relative to the repository's top, which is
// what code scanning resolves them against, when the checked folder is prefix inside it.
func (l *sarifLog) prefixPaths(prefix string) {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" || prefix == "." {
		return
	}
	fix := func(locs []sarifLocation) {
		for i := range locs {
			a := &locs[i].PhysicalLocation.ArtifactLocation
			if a.URI == "." {
				a.URI = artifactURI(prefix)
			} else {
				a.URI = artifactURI(prefix) + "/" + a.URI
			}
		}
	}
	for i := range l.Runs {
		run := &l.Runs[i]
		for j := range run.Results {
			fix(run.Results[j].Locations)
		}
		for j := range run.Invocations {
			for k := range run.Invocations[j].ToolExecutionNotifications {
				fix(run.Invocations[j].ToolExecutionNotifications[k].Locations)
			}
		}
	}
}

// buildSARIF converts a report into a SARIF log with one run: the rule catalog as the
// driver's rules, each violation as a result (waived ones as suppressed notes), and the
// problems and render warnings as notifications of the run's invocation. At most limit
// results are kept, the most important first.
func buildSARIF(r *Report, limit int) sarifLog {
	driver := sarifDriver{Name: cmp.Or(r.Tool.Name, "olmsync"), Version: r.Tool.Version, InformationURI: InformationURI}
	// GitHub prefers semanticVersion; only a real semantic version may go there.
	if v, err := semver.Parse(strings.TrimPrefix(r.Tool.Version, "v")); err == nil {
		driver.SemanticVersion = v.String()
	}
	ruleIndex := map[string]int{}
	driver.Rules = make([]sarifRule, 0, len(r.Rules))
	for i, rule := range r.Rules {
		driver.Rules = append(driver.Rules, toSARIFRule(rule))
		ruleIndex[rule.ID] = i
	}

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
		results = append(results, toSARIFResult(v, ruleIndex[v.Rule], occurrences[keyOf(v)]))
	}

	return sarifLog{
		Schema:  sarifSchemaURI,
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:        sarifTool{Driver: driver},
			Invocations: []sarifInvocation{toSARIFInvocation(r, dropped)},
			Results:     results,
		}},
	}
}

func toSARIFRule(rule Rule) sarifRule {
	help := cmp.Or(rule.Help, rule.Description, rule.Title)
	markdown := help
	if rule.HelpURI != "" {
		markdown += "\n\n[Documentation](" + rule.HelpURI + ")"
	}
	tags := []string{"olmsync", "olm"}
	if rule.Custom {
		tags = append(tags, "custom")
	}
	return sarifRule{
		ID:                   rule.ID,
		Name:                 truncate(rule.Title, maxSARIFRuleName),
		ShortDescription:     sarifMessage{Text: truncate(rule.Title, maxSARIFDescription)},
		FullDescription:      sarifMessage{Text: truncate(cmp.Or(rule.Description, rule.Title), maxSARIFDescription)},
		Help:                 sarifMessage{Text: help, Markdown: markdown},
		HelpURI:              rule.HelpURI,
		DefaultConfiguration: sarifConfiguration{Level: string(rule.Severity)},
		Properties:           sarifRuleProps{Tags: tags, Precision: "very-high", ProblemSeverity: string(rule.Severity)},
	}
}

// toSARIFResult converts one violation. occurrence counts the violations with the same
// identity so far, so that each gets its own fingerprint.
func toSARIFResult(v Violation, ruleIndex, occurrence int) sarifResult {
	res := sarifResult{
		RuleID:              v.Rule,
		RuleIndex:           ruleIndex,
		Level:               string(v.Severity),
		Message:             sarifMessage{Text: violationText(v)},
		Locations:           []sarifLocation{toSARIFLocation(v.File, v.Line)},
		PartialFingerprints: fingerprints(v, occurrence),
		Properties:          sarifResultProps{App: v.App, Cluster: v.Cluster, Severity: v.Severity, Waived: v.Waived},
	}
	if !v.Object.IsZero() {
		res.Properties.Object = &v.Object
	}
	switch v.Status {
	case StatusNew:
		res.BaselineState = "new"
	case StatusPreExisting:
		res.BaselineState = "unchanged"
	}
	if v.Waived {
		// GitHub code scanning ignores suppressions and would list a waived violation as
		// an open alert at its full level; as a note it stays visible but quiet.
		res.Level = "note"
		res.Suppressions = []sarifSuppression{toSARIFSuppression(v.Waiver)}
	}
	return res
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
func fingerprints(v Violation, occurrence int) map[string]string {
	k := keyOf(v)
	sum := sha256.Sum256([]byte(strings.Join([]string{k.rule, k.app, k.object, k.file}, "\x00")))
	full := hex.EncodeToString(sum[:])
	return map[string]string{
		"primaryLocationLineHash": fmt.Sprintf("%s:%d", full[:16], occurrence),
		fingerprintKey:            fmt.Sprintf("%s:%d", full, occurrence),
	}
}

func toSARIFLocation(file string, line int) sarifLocation {
	return sarifLocation{PhysicalLocation: sarifPhysicalLocation{
		ArtifactLocation: sarifArtifactLocation{URI: artifactURI(file)},
		// GitHub needs a line to place an alert; 1 stands for "somewhere in the file".
		Region: sarifRegion{StartLine: max(line, 1)},
	}}
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

// toSARIFInvocation reports what kept the run from seeing everything: problems (errors
// for the checked revision, warnings for the base), render warnings, and results left out
// to stay within GitHub's limit; and, as notes, what the OLM preview's Subscriptions bring.
func toSARIFInvocation(r *Report, dropped int) sarifInvocation {
	inv := sarifInvocation{ExecutionSuccessful: r.Summary.Result != ResultIncomplete}
	for _, p := range r.Problems {
		level := "error"
		if p.Base {
			level = "warning"
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			toSARIFNotification(level, withApp(p.Message, p.App), p.File, p.Line))
	}
	for _, w := range r.Warnings {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			toSARIFNotification("warning", w.Message, w.File, w.Line))
	}
	// What each Subscription brings (the OLM preview): notes on its line, not results, as
	// they are no finding.
	for _, sp := range r.Subscriptions {
		if lines := bringsLines(sp.Brings); len(lines) > 0 {
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, toSARIFNotification("note",
				"Subscription "+sp.ID()+" brings "+sp.Brings.CSV+":\n"+strings.Join(lines, "\n"), sp.File, sp.Line))
		}
	}
	if dropped > 0 {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, toSARIFNotification("warning",
			fmt.Sprintf("%d results left out: GitHub code scanning accepts at most %d per run; the JSON report has them all",
				dropped, maxSARIFResults), "", 0))
	}
	return inv
}

func toSARIFNotification(level, message, file string, line int) sarifNotification {
	n := sarifNotification{Level: level, Message: sarifMessage{Text: message}}
	if file != "" {
		n.Locations = []sarifLocation{toSARIFLocation(file, line)}
	}
	return n
}
