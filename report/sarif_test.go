package report

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sarifv2 "github.com/owenrumney/go-sarif/v2/sarif"
	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

func writeSARIFBytes(t *testing.T, r *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatSARIF, Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sarifReports(t *testing.T) map[string]*Report {
	return map[string]*Report{"full": fixtureReport(t), "nobase": noBaseReport(t), "clean": cleanReport(t)}
}

// TestSARIFMatchesTheOfficialSchema validates the output against the SARIF 2.1.0 JSON
// schema (the copy go-sarif v3 embeds: v2, which writes the output, has no validator), and checks that every key written is one the schema's
// types know: a misspelt key would otherwise be dropped by the round trip unnoticed.
func TestSARIFMatchesTheOfficialSchema(t *testing.T) {
	for name, r := range sarifReports(t) {
		t.Run(name, func(t *testing.T) {
			out := writeSARIFBytes(t, r)
			log, err := gosarif.FromBytes(out)
			if err != nil {
				t.Fatalf("parse SARIF: %v", err)
			}
			for _, run := range log.Runs {
				// The library writes these three fields whether set or not, and its zero
				// values break the schema; they are not in the output (see below), so give
				// them the schema's defaults.
				run.Language = "en-US"
				run.Tool.Driver.Language = "en-US"
				run.NewlineSequences = []string{"\r\n", "\n"}
			}
			if err := log.Validate(); err != nil {
				t.Fatalf("SARIF does not match the 2.1.0 schema: %v", err)
			}
			var again bytes.Buffer
			if err := log.Write(&again); err != nil {
				t.Fatal(err)
			}
			known := keyPaths(t, again.Bytes())
			for _, p := range keyPaths(t, out) {
				if !slices.Contains(known, p) {
					t.Errorf("key %s is not part of SARIF 2.1.0", p)
				}
			}
		})
	}
}

// keyPaths lists the object keys of a JSON document as paths ("runs[].tool.driver.name"),
// leaving out the free-form maps (property bags, fingerprints).
func keyPaths(t *testing.T, doc []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var paths []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				p := path + "." + k
				paths = append(paths, p)
				if k != "properties" && k != "partialFingerprints" {
					walk(child, p)
				}
			}
		case []any:
			for _, child := range v {
				walk(child, path+"[]")
			}
		}
	}
	walk(v, "")
	slices.Sort(paths)
	return slices.Compact(paths)
}

// sarifDoc is the part of a SARIF log GitHub reads, decoded from the output on its own
// (not with the writer's types), to check GitHub's documented requirements and limits.
type sarifDoc struct {
	Schema  *string `json:"$schema"`
	Version string  `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name            string `json:"name"`
				SemanticVersion string `json:"semanticVersion"`
				Rules           []struct {
					ID               string `json:"id"`
					Name             string `json:"name"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
					FullDescription struct {
						Text string `json:"text"`
					} `json:"fullDescription"`
					Help struct {
						Text     string `json:"text"`
						Markdown string `json:"markdown"`
					} `json:"help"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
					Properties struct {
						Tags []string `json:"tags"`
					} `json:"properties"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful        bool `json:"executionSuccessful"`
			ToolExecutionNotifications []struct {
				Level   string `json:"level"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex *int   `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
			BaselineState       string            `json:"baselineState"`
			Suppressions        []struct {
				Kind          string `json:"kind"`
				Status        string `json:"status"`
				Justification string `json:"justification"`
			} `json:"suppressions"`
		} `json:"results"`
	} `json:"runs"`
}

var lineHash = regexp.MustCompile(`^[0-9a-f]{16}:[1-9][0-9]*$`)

// TestSARIFMeetsGitHubRequirements checks what GitHub code scanning documents as required
// and its limits: required properties present and non-empty, descriptions within 1,024
// characters, rule names within 255, at most 20 runs, 25,000 results per run, 20 tags per
// rule and 10 locations per result; repository-relative URIs; start lines from 1; stable
// fingerprints; waived results suppressed.
func TestSARIFMeetsGitHubRequirements(t *testing.T) {
	for name, r := range sarifReports(t) {
		t.Run(name, func(t *testing.T) {
			var doc sarifDoc
			if err := json.Unmarshal(writeSARIFBytes(t, r), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Schema == nil || *doc.Schema == "" || doc.Version != "2.1.0" {
				t.Fatalf("$schema %v, version %q: want a schema URI and 2.1.0", doc.Schema, doc.Version)
			}
			if len(doc.Runs) != 1 {
				t.Fatalf("%d runs, want 1 (GitHub takes at most 20)", len(doc.Runs))
			}
			run := doc.Runs[0]
			driver := run.Tool.Driver
			if driver.Name != "olmsync" {
				t.Errorf("tool.driver.name = %q", driver.Name)
			}
			if len(driver.Rules) != len(r.Rules) {
				t.Errorf("%d rules, want the catalog's %d", len(driver.Rules), len(r.Rules))
			}
			for i, rule := range driver.Rules {
				if rule.ID != r.Rules[i].ID {
					t.Errorf("rule %d is %q, want %q", i, rule.ID, r.Rules[i].ID)
				}
				for field, text := range map[string]string{
					"shortDescription.text": rule.ShortDescription.Text, "fullDescription.text": rule.FullDescription.Text,
					"help.text": rule.Help.Text, "name": rule.Name,
				} {
					limit := map[bool]int{true: maxSARIFRuleName, false: maxSARIFDescription}[field == "name"]
					if text == "" || len([]rune(text)) > limit {
						t.Errorf("rule %s: %s has %d characters, want 1 to %d", rule.ID, field, len([]rune(text)), limit)
					}
				}
				if !slices.Contains([]string{"note", "warning", "error"}, rule.DefaultConfiguration.Level) {
					t.Errorf("rule %s: defaultConfiguration.level %q", rule.ID, rule.DefaultConfiguration.Level)
				}
				if len(rule.Properties.Tags) > 20 {
					t.Errorf("rule %s has %d tags, GitHub takes 20", rule.ID, len(rule.Properties.Tags))
				}
			}

			if len(run.Results) > maxSARIFResults || len(run.Results) != len(r.Violations) {
				t.Fatalf("%d results, want one per violation (%d), at most %d", len(run.Results), len(r.Violations), maxSARIFResults)
			}
			seen := map[string]bool{}
			for _, res := range run.Results {
				if res.RuleIndex == nil || *res.RuleIndex < 0 || *res.RuleIndex >= len(driver.Rules) || driver.Rules[*res.RuleIndex].ID != res.RuleID {
					t.Errorf("result %s: ruleIndex %v does not point at its rule", res.RuleID, res.RuleIndex)
				}
				if res.Message.Text == "" {
					t.Errorf("result %s has no message.text", res.RuleID)
				}
				if n := len(res.Locations); n < 1 || n > 10 {
					t.Errorf("result %s has %d locations, want 1 to 10", res.RuleID, n)
					continue
				}
				loc := res.Locations[0].PhysicalLocation
				u, err := url.Parse(loc.ArtifactLocation.URI)
				if err != nil || u.IsAbs() || strings.HasPrefix(u.Path, "/") {
					t.Errorf("result %s: uri %q is not a relative reference (%v)", res.RuleID, loc.ArtifactLocation.URI, err)
				}
				if loc.Region.StartLine < 1 {
					t.Errorf("result %s: region.startLine %d", res.RuleID, loc.Region.StartLine)
				}
				fp := res.PartialFingerprints["primaryLocationLineHash"]
				if !lineHash.MatchString(fp) {
					t.Errorf("result %s: primaryLocationLineHash %q", res.RuleID, fp)
				}
				if seen[fp] {
					t.Errorf("result %s: fingerprint %s given twice", res.RuleID, fp)
				}
				seen[fp] = true
			}
			for _, inv := range run.Invocations {
				if inv.ExecutionSuccessful != (r.Summary.Result != ResultIncomplete) {
					t.Errorf("executionSuccessful %v for a %s check", inv.ExecutionSuccessful, r.Summary.Result)
				}
				if got, want := len(inv.ToolExecutionNotifications), len(r.Problems)+len(r.Warnings); got != want {
					t.Errorf("%d notifications, want one per problem and warning (%d)", got, want)
				}
			}
		})
	}
}

// TestSARIFResultsFollowTheViolations checks each result against the violation it comes
// from: level, location, baseline state and suppression.
func TestSARIFResultsFollowTheViolations(t *testing.T) {
	r := fixtureReport(t)
	var doc sarifDoc
	if err := json.Unmarshal(writeSARIFBytes(t, r), &doc); err != nil {
		t.Fatal(err)
	}
	type result struct {
		rule, level, uri, baseline, suppression, justification string
		line                                                   int
	}
	var got []result
	for _, res := range doc.Runs[0].Results {
		loc := res.Locations[0].PhysicalLocation
		g := result{rule: res.RuleID, level: res.Level, uri: loc.ArtifactLocation.URI, line: loc.Region.StartLine, baseline: res.BaselineState}
		if len(res.Suppressions) == 1 {
			g.suppression = res.Suppressions[0].Kind + "/" + res.Suppressions[0].Status
			g.justification = res.Suppressions[0].Justification
		}
		got = append(got, g)
	}
	logURI := "cluster-scope/base/logging%3A%20100%25%2C%20v5/operatorgroup.yaml"
	want := []result{
		// Errors first, new before pre-existing; then warnings; then waived ones.
		{rule: "OP007", level: "error", uri: "apps/etcd/subscription.yaml", line: 3, baseline: "new"},
		{rule: "OP005", level: "error", uri: "apps/odh/subscription.yaml", line: 9, baseline: "new"},
		{rule: "OP002", level: "error", uri: logURI, line: 12, baseline: "unchanged"},
		{rule: "OP009", level: "warning", uri: logURI, line: 30, baseline: "new"},
		{rule: "CUSTOM-1", level: "warning", uri: "apps/etcd/configmap.yaml", line: 1, baseline: "unchanged"},
		{rule: "OP009", level: "note", uri: "apps/odh/csv.yaml", line: 1, baseline: "unchanged", suppression: "inSource/accepted", justification: "pinned until ODH 2.5 ships"},
		{rule: "OP010", level: "note", uri: "apps/odh/installplan.yaml", line: 1, baseline: "new", suppression: "external/accepted", justification: "reviewed by platform team, see OPS-1234"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestSARIFKeepsTheMostImportantResultsWithinTheLimit(t *testing.T) {
	r := fixtureReport(t)
	log, err := buildSARIF(r, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	var rules []string
	for _, res := range run.Results {
		rules = append(rules, *res.RuleID+"/"+*res.Level+"/"+*res.BaselineState)
	}
	if diff := cmp.Diff([]string{"OP007/error/new", "OP005/error/new"}, rules); diff != "" {
		t.Errorf("kept results (-want +got):\n%s", diff)
	}
	notes := run.Invocations[0].ToolExecutionNotifications
	last := *notes[len(notes)-1].Message.Text
	if !strings.HasPrefix(last, "5 results left out") {
		t.Errorf("last notification %q, want one saying 5 results were left out", last)
	}
}

func TestFingerprints(t *testing.T) {
	base := Violation{Rule: "OP007", App: "etcd", File: "apps/etcd/sub.yaml", Line: 3, Object: subEtcd, Message: "m"}
	moved := base
	moved.Line, moved.Message = 40, "another wording"
	newVersion := base
	newVersion.Object.APIVersion = "operators.coreos.com/v2"
	otherObject := base
	otherObject.Object.Name = "etcd-2"
	otherApp := base
	otherApp.App = "etcd-prod"
	otherRule := base
	otherRule.Rule = "OP005"
	fileOnly := Violation{Rule: "OP011", App: "etcd", File: "a.yaml"}
	otherFile := Violation{Rule: "OP011", App: "etcd", File: "b.yaml"}

	fp := func(v Violation, n int) string { return fingerprints(v, n)["primaryLocationLineHash"].(string) }
	same := []struct {
		name string
		a, b Violation
	}{
		{"moved lines, reworded", base, moved},
		{"another version of the API", base, newVersion},
	}
	for _, tt := range same {
		if fp(tt.a, 1) != fp(tt.b, 1) || fingerprints(tt.a, 1)[fingerprintKey] != fingerprints(tt.b, 1)[fingerprintKey] {
			t.Errorf("%s: fingerprints differ", tt.name)
		}
	}
	different := []struct {
		name string
		a, b Violation
	}{
		{"another object", base, otherObject},
		{"another app", base, otherApp},
		{"another rule", base, otherRule},
		{"another file, no object", fileOnly, otherFile},
	}
	for _, tt := range different {
		if fp(tt.a, 1) == fp(tt.b, 1) {
			t.Errorf("%s: fingerprints are equal", tt.name)
		}
	}
	if first, second := fp(base, 1), fp(base, 2); first[:16] != second[:16] || !strings.HasSuffix(second, ":2") {
		t.Errorf("second occurrence %q of %q: want the same hash, occurrence 2", second, first)
	}
}

func TestArtifactURI(t *testing.T) {
	tests := []struct{ file, want string }{
		{"apps/etcd/subscription.yaml", "apps/etcd/subscription.yaml"},
		{"cluster-scope/base/logging: 100%, v5/og.yaml", "cluster-scope/base/logging%3A%20100%25%2C%20v5/og.yaml"},
		{"c:/x.yaml", "c%3A/x.yaml"},
		{"a#b/c?d.yaml", "a%23b/c%3Fd.yaml"},
		{"überall/ns.yaml", "%C3%BCberall/ns.yaml"},
		{"", "."},
		// Found by FuzzWriters (testdata/fuzz/FuzzWriters/ff6c35f02d0ed451): a path with a
		// leading "//" was written as a network-path reference, "//host...". A repository's
		// paths are relative: leading slashes are dropped.
		{"//  \x00", "%20%20%00"},
		{"/apps/ns.yaml", "apps/ns.yaml"},
		{"/", "."},
	}
	for _, tt := range tests {
		got := artifactURI(tt.file)
		if got != tt.want {
			t.Errorf("artifactURI(%q) = %q, want %q", tt.file, got, tt.want)
		}
		u, err := url.Parse(got)
		if err != nil || u.Scheme != "" {
			t.Errorf("artifactURI(%q) = %q is not a relative reference: %v", tt.file, got, err)
			continue
		}
		if rel := strings.TrimLeft(tt.file, "/"); rel != "" && u.Path != rel {
			t.Errorf("artifactURI(%q) decodes to %q", tt.file, u.Path)
		}
	}
}

// TestSARIFPathPrefix checks that a GitOps folder inside a monorepo annotates the files
// where code scanning looks for them: relative to the repository's top.
func TestSARIFPathPrefix(t *testing.T) {
	r := fixtureReport(t)
	var plainOut, prefixed bytes.Buffer
	if err := Write(&plainOut, r, FormatSARIF, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&prefixed, r, FormatSARIF, Options{PathPrefix: "deploy/gitops/"}); err != nil {
		t.Fatal(err)
	}
	uris := func(b []byte) []string {
		log, err := sarifv2.FromBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, res := range log.Runs[0].Results {
			out = append(out, *res.Locations[0].PhysicalLocation.ArtifactLocation.URI)
		}
		for _, n := range log.Runs[0].Invocations[0].ToolExecutionNotifications {
			for _, l := range n.Locations {
				out = append(out, *l.PhysicalLocation.ArtifactLocation.URI)
			}
		}
		return out
	}
	before, after := uris(plainOut.Bytes()), uris(prefixed.Bytes())
	if len(before) == 0 || len(before) != len(after) {
		t.Fatalf("locations: %d without a prefix, %d with", len(before), len(after))
	}
	for i := range before {
		if after[i] != "deploy/gitops/"+before[i] {
			t.Errorf("location %d = %q, want %q", i, after[i], "deploy/gitops/"+before[i])
		}
	}
}

// TestSARIFWritesOnlyWhatIsSet fails on the defaults a SARIF library writes for fields
// nobody set: -1 for an id, index, offset or rank, null, and empty arrays and objects.
// runs[].results is the one empty array SARIF gives a meaning to: the run found nothing.
func TestSARIFWritesOnlyWhatIsSet(t *testing.T) {
	for name, r := range sarifReports(t) {
		t.Run(name, func(t *testing.T) {
			if unset := unsetValues(t, writeSARIFBytes(t, r)); len(unset) > 0 {
				t.Errorf("values nobody set:\n%s", strings.Join(unset, "\n"))
			}
		})
	}
	// The check finds them where they are: go-sarif v3 writes our log with empty arrays and
	// property bags, and a location made by its constructors with ids of -1.
	log, err := gosarif.FromBytes(writeSARIFBytes(t, fixtureReport(t)))
	if err != nil {
		t.Fatal(err)
	}
	log.Runs[0].Results[0].Locations[0] = gosarif.NewLocation().WithPhysicalLocation(gosarif.NewPhysicalLocation().
		WithArtifactLocation(gosarif.NewArtifactLocation().WithURI("a.yaml")).WithRegion(gosarif.NewRegion().WithStartLine(1)))
	var v3 bytes.Buffer
	if err := log.Write(&v3); err != nil {
		t.Fatal(err)
	}
	unset := strings.Join(unsetValues(t, v3.Bytes()), "\n")
	for _, want := range []string{
		".properties = {}",
		".runs[].results[].codeFlows = []",
		".runs[].results[].locations[].id = -1",
		".runs[].results[].locations[].physicalLocation.artifactLocation.index = -1",
		".runs[].results[].locations[].physicalLocation.region.byteOffset = -1",
	} {
		if !strings.Contains(unset, want) {
			t.Errorf("go-sarif v3's output: %s not found in\n%s", want, unset)
		}
	}
	// And in go-sarif v2's suppressions, which is why olmsync writes its own (sarif.go).
	b, err := json.Marshal(sarifv2.NewSuppression("inSource").WithStatus("accepted"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{".guid = null", ".justification = null", ".location = null"}, unsetValues(t, b)); diff != "" {
		t.Errorf("go-sarif v2's suppression (-want +got):\n%s", diff)
	}
}

// unsetValues lists, as "path = value", each -1, null, [] and {} of a JSON document but an
// empty runs[].results, once per path.
func unsetValues(t *testing.T, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var found []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case nil:
			found = append(found, path+" = null")
		case json.Number:
			if v == "-1" {
				found = append(found, path+" = -1")
			}
		case []any:
			if len(v) == 0 && path != ".runs[].results" {
				found = append(found, path+" = []")
			}
			for _, child := range v {
				walk(child, path+"[]")
			}
		case map[string]any:
			if len(v) == 0 {
				found = append(found, path+" = {}")
			}
			for k, child := range v {
				walk(child, path+"."+k)
			}
		}
	}
	walk(v, "")
	slices.Sort(found)
	return slices.Compact(found)
}
