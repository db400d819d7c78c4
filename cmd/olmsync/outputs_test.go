package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/gittest"
)

// TestCheckOutputsOneRun: `check -o github -o sarif=F -o ...` writes every report from one
// run, and each is the report a run of that format alone writes, field by field — JSON and
// SARIF as decoded documents, JUnit as its XML elements and attributes, the others line by
// line — with the same exit code. The run is a pull request's (--base), so the marks
// against the base and the OLM changes are in every report; JUnit's listing of every
// checked object (which makes the run list them) stays out of the others.
func TestCheckOutputsOneRun(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Commit(t, dir, map[string]string{
		"team-a/kustomization.yaml": "resources: [installplan.yaml, subscription.yaml]\n",
		"team-a/installplan.yaml":   installPlanYAML,
		"team-a/subscription.yaml":  subscriptionYAML,
	}, "base")
	gittest.Git(t, dir, "checkout", "-q", "-b", "feature")
	gittest.Commit(t, dir, map[string]string{
		"team-a/kustomization.yaml": "resources: [installplan.yaml, subscription.yaml, second.yaml]\n",
		"team-a/subscription.yaml":  strings.Replace(subscriptionYAML, "singlenamespace-alpha", "clusterwide-alpha", 1),
		"team-a/second.yaml":        strings.Replace(installPlanYAML, "name: ip", "name: second", 1),
	}, "change the channel, add an InstallPlan")
	pr := []string{"check", dir, "--base", "main", "--fail-on", "new"}

	files := t.TempDir()
	path := func(format string) string { return filepath.Join(files, "olmsync."+format) }
	toFiles := []string{"json", "sarif", "junit", "markdown", "text"}
	args := append(append([]string(nil), pr...), "-o", "github")
	for _, format := range toFiles {
		args = append(args, "-o", format+"="+path(format))
	}
	github, err := run(t, args...)
	wantExit(t, err, exitFindings)
	got := map[string]string{"github": github}
	for _, format := range toFiles {
		b, err := os.ReadFile(path(format))
		if err != nil {
			t.Fatal(err)
		}
		got[format] = string(b)
	}

	for format, multi := range got {
		t.Run(format, func(t *testing.T) {
			single, err := run(t, append(append([]string(nil), pr...), "-o", format)...)
			wantExit(t, err, exitFindings)
			if !strings.Contains(single, "team-a/second.yaml") {
				t.Fatalf("the single-format report does not name the new violation's file:\n%s", single)
			}
			var diff string
			switch format {
			case "json", "sarif":
				diff = cmp.Diff(decodeJSON(t, single), decodeJSON(t, multi))
			case "junit":
				diff = cmp.Diff(decodeXML(t, single), decodeXML(t, multi))
			default:
				diff = cmp.Diff(strings.Split(single, "\n"), strings.Split(multi, "\n"))
			}
			if diff != "" {
				t.Errorf("-o %s in one run with five other reports (-alone +together):\n%s", format, diff)
			}
		})
	}
}

// TestCheckOutputsUsage: outputs that would interleave or overwrite each other are refused
// before anything is checked.
func TestCheckOutputsUsage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "r")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"two to standard output", []string{"-o", "github", "-o", "markdown"}, "-o github and -o markdown both write to standard output"},
		{"two to one file", []string{"-o", "sarif=" + file, "-o", "json=" + file}, "write to the same file"},
		{"--output-file for two", []string{"-o", "github", "-o", "text", "--output-file", file}, "and 2 -o have none"},
		{"--output-file for none", []string{"-o", "sarif=" + file, "--output-file", file}, "every -o names its own file"},
		{"no file after =", []string{"-o", "sarif="}, "no file after"},
		{"unknown format with a file", []string{"-o", "xml=" + file}, `unknown report format "xml"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, append([]string{"check", dir}, tt.args...)...)
			wantExit(t, err, exitUsage)
			if !strings.Contains(out, tt.want) {
				t.Errorf("output does not say %q:\n%s", tt.want, out)
			}
			if _, err := os.Stat(file); err == nil {
				t.Errorf("%s was written", file)
			}
		})
	}
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, s)
	}
	return v
}

// xmlNode is an XML element with everything in it, for comparing two documents.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []xmlNode  `xml:",any"`
}

func decodeXML(t *testing.T, s string) xmlNode {
	t.Helper()
	var n xmlNode
	if err := xml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("not XML (%v):\n%s", err, s)
	}
	return n
}
