package main

import (
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/report"
)

// The example repositories, relative to this package.
var (
	examplePassing    = filepath.Join("..", "..", "examples", "gitops")
	exampleViolations = filepath.Join("..", "..", "examples", "gitops-violations")
)

// finding is what the end-to-end tests compare of a violation.
type finding struct {
	Rule, Severity, Cluster, App, File string
	Line                               int
	Waived                             bool
}

func findings(r *report.Report) []finding {
	out := make([]finding, 0, len(r.Violations))
	for _, v := range r.Violations {
		out = append(out, finding{v.Rule, string(v.Severity), v.Cluster, v.App, v.File, v.Line, v.Waived})
	}
	return out
}

// TestExamplePasses checks examples/gitops through the CLI: six apps found through Argo
// CD Applications (an app of apps, two clusters), nothing that fails, three violations
// waived (two by annotation, one in olmsync.yaml).
func TestExamplePasses(t *testing.T) {
	r, err := checkJSON(t, examplePassing, "--list-objects")
	wantExit(t, err, 0)
	const cs = "cluster-scope/base/operators.coreos.com/"
	want := []finding{
		{"OP012", "warning", "alpha", "cluster-scope-alpha", cs + "operatorgroups/openshift-logging/operatorgroup.yaml", 3, true},
		{"OP012", "warning", "alpha", "cluster-scope-alpha", cs + "subscriptions/cluster-logging/subscription.yaml", 1, true},
		{"OP013", "error", "alpha", "cluster-scope-alpha", cs + "subscriptions/opendatahub-operator/subscription.yaml", 3, true},
	}
	if diff := cmp.Diff(want, findings(r)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	var apps []string
	for _, a := range r.Apps {
		apps = append(apps, fmt.Sprintf("%s/%s %s cluster-scope=%t", a.Cluster, a.Name, a.Path, a.ClusterScope))
	}
	wantApps := []string{
		"alpha/cluster-scope-alpha cluster-scope/overlays/prod/us-east-1/alpha cluster-scope=true",
		"alpha/team-a-alpha team-a/overlays/alpha cluster-scope=false",
		"alpha/team-b-alpha team-b cluster-scope=false",
		"beta/cluster-scope-beta cluster-scope/overlays/prod/eu-west-1/beta cluster-scope=true",
		"beta/team-a-beta team-a/overlays/beta cluster-scope=false",
		"in-cluster/app-of-apps argocd/applications cluster-scope=false",
	}
	if diff := cmp.Diff(wantApps, apps); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	if r.Summary.Result != report.ResultPassed || r.Summary.Waived != 3 || len(r.Problems) != 0 || len(r.Warnings) != 0 {
		t.Errorf("summary %+v, problems %+v, warnings %+v", r.Summary, r.Problems, r.Warnings)
	}
	// The app of apps renders the five Applications it deploys (directory.recurse).
	applications := 0
	for _, o := range r.Objects {
		if o.App == "app-of-apps" && o.Object.Kind == "Application" {
			applications++
		}
	}
	if applications != 5 || r.Summary.Objects != 27 {
		t.Errorf("the app of apps renders %d Applications; %d objects in all", applications, r.Summary.Objects)
	}
	waivers := map[report.WaiverSource]int{}
	for _, v := range r.Violations {
		waivers[v.Waiver.Source]++
	}
	if waivers[report.WaiverAnnotation] != 2 || waivers[report.WaiverConfig] != 1 {
		t.Errorf("waivers by source: %v", waivers)
	}
}

// TestExampleViolations checks examples/gitops-violations through the CLI: every rule
// OP001–OP015 broken in cluster alpha, each at its file and line; cluster beta, built
// from the same bases, stays clean.
func TestExampleViolations(t *testing.T) {
	r, err := checkJSON(t, exampleViolations)
	wantExit(t, err, exitFindings)
	const (
		base    = "cluster-scope/base/operators.coreos.com/"
		overlay = "cluster-scope/overlays/prod/us-east-1/alpha/"
		cs      = "cluster-scope-alpha"
	)
	want := []finding{
		{"OP012", "warning", "alpha", cs, base + "operatorgroups/openshift-logging/operatorgroup.yaml", 3, false},
		{"OP004", "error", "alpha", cs, base + "operatorgroups/team-a/operatorgroup.yaml", 2, false},
		{"OP012", "warning", "alpha", cs, base + "subscriptions/cluster-logging/subscription.yaml", 1, false},
		{"OP013", "error", "alpha", cs, base + "subscriptions/opendatahub-operator/subscription.yaml", 3, false},
		{"OP005", "error", "alpha", cs, overlay + "loki-subscription.yaml", 2, false},
		{"OP002", "error", "alpha", cs, overlay + "shared-operatorgroup.yaml", 3, false},
		{"OP004", "error", "alpha", cs, overlay + "team-a-operators.yaml", 3, false},
		{"OP003", "error", "alpha", cs, overlay + "team-c-operatorgroup.yaml", 3, false},
		{"OP011", "error", "alpha", "team-a-alpha", "team-a/overlays/alpha/clusterrole.yaml", 2, false},
		{"OP009", "error", "alpha", "team-a-alpha", "team-a/overlays/alpha/csv.yaml", 3, false},
		{"OP007", "error", "alpha", "team-a-alpha", "team-a/overlays/alpha/subscription-team-b.yaml", 2, false},
		{"OP015", "error", "alpha", "team-a-alpha", "team-a/overlays/alpha/subscription-team-b.yaml", 2, false},
		{"OP001", "error", "alpha", "team-b-alpha", "team-b/olm.yaml", 2, false},
		{"OP006", "error", "alpha", "team-b-alpha", "team-b/olm.yaml", 13, false},
		{"OP007", "error", "alpha", "team-b-alpha", "team-b/olm.yaml", 13, false},
		{"OP008", "error", "alpha", "team-b-alpha", "team-b/olm.yaml", 25, false},
		{"OP010", "error", "alpha", "team-b-alpha", "team-b/olm.yaml", 35, false},
		{"OP014", "error", "alpha", "team-b-alpha", "team-b/subscription-elsewhere.yaml", 2, false},
	}
	if diff := cmp.Diff(want, findings(r)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	broken := map[string]bool{}
	for _, f := range findings(r) {
		broken[f.Rule] = true
	}
	for i := 1; i <= 15; i++ {
		if id := fmt.Sprintf("OP%03d", i); !broken[id] {
			t.Errorf("no example breaks %s", id)
		}
	}
	if r.Summary.Errors != 16 || r.Summary.Warnings != 2 || len(r.Problems) != 0 {
		t.Errorf("summary %+v, problems %+v", r.Summary, r.Problems)
	}
}

// TestExampleFormats writes the violations example in every format through the CLI and
// checks that each carries a violation's rule, file and line as its readers expect.
func TestExampleFormats(t *testing.T) {
	tests := []struct {
		format string
		want   []string
	}{
		{"text", []string{"team-b/olm.yaml\n  2   error    OP001  OperatorGroup team-b/team-b  (app team-b-alpha)", "failed: 16 errors"}},
		// The example is a folder of olmsync's repository: GitHub and code scanning read
		// paths from the repository's top.
		// 16 errors: nine annotated, a tenth counting the rest, which are in the log.
		{"github", []string{"::error file=examples/gitops-violations/team-a/overlays/alpha/clusterrole.yaml,line=2,title=OP011 ",
			"::error title=olmsync%3A 7 more errors not shown::",
			"\n  error examples/gitops-violations/team-b/olm.yaml:35 OP010 No InstallPlan in Git: ",
			"::warning file=examples/gitops-violations/cluster-scope/base/operators.coreos.com/subscriptions/cluster-logging/subscription.yaml,line=1,title=OP012 "}},
		{"markdown", []string{"<!-- olmsync-report -->", "`team-a/overlays/alpha/csv.yaml:3`", "OP009"}},
		{"sarif", []string{`"ruleId": "OP003"`, `"uri": "examples/gitops-violations/cluster-scope/overlays/prod/us-east-1/alpha/team-c-operatorgroup.yaml"`, `"startLine": 3`}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			out, err := run(t, "check", exampleViolations, "-o", tt.format)
			wantExit(t, err, exitFindings)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s output does not contain %q:\n%s", tt.format, w, out)
				}
			}
		})
	}

	t.Run("junit", func(t *testing.T) {
		out, err := run(t, "check", exampleViolations, "-o", "junit")
		wantExit(t, err, exitFindings)
		var suites struct {
			Suites []struct {
				Name  string `xml:"name,attr"`
				Cases []struct {
					Name    string    `xml:"name,attr"`
					File    string    `xml:"file,attr"`
					Failure *struct{} `xml:"failure"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal([]byte(out), &suites); err != nil {
			t.Fatalf("not JUnit XML: %v\n%s", err, out)
		}
		failed, passed := map[string]string{}, 0
		for _, s := range suites.Suites {
			for _, c := range s.Cases {
				if c.Failure != nil {
					failed[c.Name] = c.File
				} else {
					passed++
				}
			}
		}
		if failed["OP010 InstallPlan team-b/install-prometheus"] != "team-b/olm.yaml" || len(failed) != 18 || passed == 0 {
			t.Errorf("%d failed cases %v, %d passed", len(failed), failed, passed)
		}
	})
}

// TestExamplePreview checks examples/gitops with its catalog and cluster alpha's state
// through the CLI: every Subscription previewed in both clusters, nothing that fails, and
// team-a's etcd upgrading along its path on alpha.
func TestExamplePreview(t *testing.T) {
	state := filepath.Join("..", "..", "examples", "cluster-state", "alpha")
	r, err := checkJSON(t, examplePassing, "--catalog", "community-operators=catalog", "--cluster-state", "alpha="+state)
	wantExit(t, err, 0)
	var got []string
	for _, s := range r.Subscriptions {
		line := fmt.Sprintf("%s %s %s %v", s.Cluster, s.ID(), s.Resolution.Status, s.Resolution.Path)
		if s.Outcome != nil {
			line += " " + s.Outcome.Phase
		}
		got = append(got, line)
	}
	want := []string{
		"alpha openshift-logging/cluster-logging Resolved [cluster-logging.v6.1.0] Succeeded",
		"alpha openshift-operators/cert-manager Resolved [cert-manager.v1.14.4] Succeeded",
		"alpha openshift-operators/opendatahub-operator Resolved [opendatahub-operator.v2.10.0] Succeeded",
		"alpha team-a/etcd Resolved [etcd.v0.9.4] RequiresApproval",
		"alpha team-b/prometheus Resolved [prometheus.v0.47.0] Succeeded",
		"beta openshift-operators/cert-manager Resolved [cert-manager.v1.14.4] Succeeded",
		"beta team-a/etcd Resolved [etcd.v0.9.4] RequiresApproval",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("preview (-want +got):\n%s", diff)
	}
	for _, s := range r.Subscriptions {
		if s.Cluster == "alpha" && s.ID() == "team-a/etcd" && (s.Installed != "etcd.v0.9.2" || !cmp.Equal(s.Resolution.Skipped, []string{"etcd.v0.9.3"})) {
			t.Errorf("alpha's etcd: installed %q, skipped %v", s.Installed, s.Resolution.Skipped)
		}
	}
	for _, v := range r.Violations {
		if strings.HasPrefix(v.Rule, "OLM") {
			t.Errorf("unexpected %s: %s", v.Rule, v.Message)
		}
	}
}
