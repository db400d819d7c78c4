package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/report"
)

// checkJSON runs `olmsync check ... -o json` and decodes the report.
func checkJSON(t *testing.T, args ...string) (*report.Report, error) {
	t.Helper()
	out, err := run(t, append([]string{"check", "-o", "json"}, args...)...)
	var r report.Report
	if jerr := json.NewDecoder(strings.NewReader(out)).Decode(&r); jerr != nil {
		t.Fatalf("output is not a report (%v; error %v):\n%s", jerr, err, out)
	}
	return &r, err
}

// wantExit fails the test unless err is what the command returns for exit code want.
func wantExit(t *testing.T, err error, want int) {
	t.Helper()
	got := 0
	if err != nil {
		got = exitCode(err)
	}
	if got != want {
		t.Fatalf("exit code %d (error %v), want %d", got, err, want)
	}
}

const (
	subscriptionYAML = `apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: etcd
spec:
  channel: singlenamespace-alpha
  name: etcd
  source: community-operators
  sourceNamespace: openshift-marketplace
`
	installPlanYAML = "apiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nmetadata:\n  name: ip\n"
)

func TestCheckUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{"check", dir, "-o", "xml"}, `unknown report format "xml"`},
		{"a file name for -o", []string{"check", dir, "-o", "report.sarif"}, "write the report to a file with --output-file report.sarif"},
		{"--format and -o disagree", []string{"check", dir, "--format", "json", "-o", "sarif"}, "disagree"},
		{"unknown fail-on", []string{"check", dir, "--fail-on", "some"}, `unknown --fail-on value "some"`},
		{"unknown group-by", []string{"check", dir, "--group-by", "colour"}, `unknown --group-by value "colour"`},
		{"two paths", []string{"check", dir, dir}, "accepts at most 1 arg"},
		{"missing folder", []string{"check", filepath.Join(dir, "nope")}, "no such file or directory"},
		{"base in a folder outside git", []string{"check", dir, "--base", "main"}, "base revision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tt.args...)
			wantExit(t, err, exitUsage)
			if !strings.Contains(out, tt.want) {
				t.Errorf("output does not say %q:\n%s", tt.want, out)
			}
		})
	}
}

// TestCheckPullRequest checks a pull request's head against its base in a real
// repository: pre-existing violations do not fail --fail-on new, the new one does, and the
// OLM change is listed.
func TestCheckPullRequest(t *testing.T) {
	dir := gittest.Init(t)
	config := "apps:\n- {name: team-a, path: team-a, namespace: team-a}\npolicy:\n  operatorGroups:\n  - {namespace: team-a, name: team-a, targetNamespaces: [team-a]}\n"
	gittest.Commit(t, dir, map[string]string{
		"olmsync.yaml":             config,
		"team-a/subscription.yaml": subscriptionYAML,
		"team-a/installplan.yaml":  installPlanYAML, // OP010, pre-existing
	}, "base")
	gittest.Git(t, dir, "checkout", "-q", "-b", "feature")
	gittest.Commit(t, dir, map[string]string{
		"team-a/subscription.yaml": strings.Replace(subscriptionYAML, "singlenamespace-alpha", "clusterwide-alpha", 1),
	}, "change the channel")

	r, err := checkJSON(t, dir, "--base", "main", "--fail-on", "new")
	wantExit(t, err, 0)
	if len(r.Violations) != 1 || r.Violations[0].Status != report.StatusPreExisting || r.Base == nil || r.Base.Ref != "main" {
		t.Errorf("violations %+v, base %+v", r.Violations, r.Base)
	}
	if len(r.Changes) != 1 || r.Changes[0].Fields[0] != (report.FieldChange{Path: "spec.channel", Old: "singlenamespace-alpha", New: "clusterwide-alpha"}) {
		t.Errorf("changes %+v", r.Changes)
	}

	// --fail-on all fails on the pre-existing error, and so does --fail-on new without a
	// base (on a push, say): every violation is new then.
	_, err = checkJSON(t, dir, "--base", "main")
	wantExit(t, err, exitFindings)
	_, err = checkJSON(t, dir, "--fail-on", "new")
	wantExit(t, err, exitFindings)

	// A new violation in an uncommitted change fails --fail-on new.
	gittest.Write(t, dir, map[string]string{"team-a/rbac.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: x\n"})
	r, err = checkJSON(t, dir, "--base", "main", "--fail-on", "new")
	wantExit(t, err, exitFindings)
	if r.Revision.Ref != "worktree" || r.Summary.New != 1 || r.Summary.PreExisting != 1 {
		t.Errorf("revision %+v, summary %+v", r.Revision, r.Summary)
	}

	// The committed head, by name.
	r, err = checkJSON(t, dir, "--ref", "feature", "--base", "main", "--fail-on", "new")
	wantExit(t, err, 0)
	if r.Revision.Ref != "feature" || r.Revision.Commit == "" {
		t.Errorf("revision %+v", r.Revision)
	}
}

func TestCheckOutputFile(t *testing.T) {
	dir := t.TempDir()
	gittest.Write(t, dir, map[string]string{
		"team-a/kustomization.yaml": "resources: [installplan.yaml]\n",
		"team-a/installplan.yaml":   installPlanYAML,
	})
	out := filepath.Join(t.TempDir(), "olmsync.sarif")
	stdout, err := run(t, "check", dir, "-o", "sarif", "--output-file", out)
	wantExit(t, err, exitFindings)
	if stdout != "" {
		t.Errorf("the report went to standard output too:\n%s", stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var sarif struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(data, &sarif); err != nil {
		t.Fatal(err)
	}
	if sarif.Version != "2.1.0" || len(sarif.Runs) != 1 || len(sarif.Runs[0].Results) != 1 {
		t.Fatalf("SARIF: %s", data)
	}
	res := sarif.Runs[0].Results[0]
	loc := res.Locations[0].PhysicalLocation
	if res.RuleID != "OP010" || loc.ArtifactLocation.URI != "team-a/installplan.yaml" || loc.Region.StartLine != 1 {
		t.Errorf("SARIF result %+v", res)
	}

	_, err = run(t, "check", dir, "--output-file", filepath.Join(dir, "missing", "report.txt"))
	wantExit(t, err, exitUsage)

	// A folder without apps is not a check that passes.
	stdout, err = run(t, "check", t.TempDir())
	wantExit(t, err, exitUsage)
	if !strings.Contains(stdout, "found no apps") {
		t.Errorf("output:\n%s", stdout)
	}
}

func TestApps(t *testing.T) {
	dir := t.TempDir()
	gittest.Write(t, dir, map[string]string{
		"cluster-scope/kustomization.yaml": "resources: [ns.yaml]\n",
		"cluster-scope/ns.yaml":            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n",
		"team-a/kustomization.yaml":        "resources: [installplan.yaml]\n",
		"team-a/installplan.yaml":          installPlanYAML,
	})
	out, err := run(t, "apps", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2 apps in 1 clusters, found as kustomization roots",
		"  cluster-scope\n      path:      cluster-scope\n      cluster-scope app: its path has a \"cluster-scope\" segment\n      cluster:   unknown: no entry point deploys it",
		"      found:     cluster-scope/kustomization.yaml: kustomization root",
		"  team-a\n      path:      team-a\n      individual app",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not contain %q:\n%s", want, out)
		}
	}
	out, err = run(t, "apps", dir, "-o", "json")
	if err != nil || !strings.Contains(out, `"method": "kustomization"`) {
		t.Errorf("JSON (error %v):\n%s", err, out)
	}
	gittest.Write(t, dir, map[string]string{"olmsync.yaml": "apps: 3\n"})
	out, err = run(t, "apps", dir)
	wantExit(t, err, exitUsage)
	if !strings.Contains(out, "olmsync.yaml:1") {
		t.Errorf("a broken olmsync.yaml is not named:\n%s", out)
	}
}

// TestCheckRenderCache: `check --render-cache` keeps each app's build on disk; a second check
// with the folder gives the same report, and a changed input is built again (the new
// violation is found, not the cached build's).
func TestCheckRenderCache(t *testing.T) {
	dir := gittest.Init(t)
	config := "apps:\n- {name: team-a, path: team-a, namespace: team-a}\n- {name: team-b, path: team-b, namespace: team-b}\n"
	gittest.Commit(t, dir, map[string]string{
		"olmsync.yaml":             config,
		"team-a/subscription.yaml": subscriptionYAML,
		"team-b/configmap.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
	}, "first")
	cache := t.TempDir()
	first, _ := checkJSON(t, dir, "--render-cache", cache)
	entries, err := filepath.Glob(filepath.Join(cache, "*", "*.json"))
	if err != nil || len(entries) != 2 {
		t.Fatalf("cache entries %v (%v), want one per app", entries, err)
	}
	second, _ := checkJSON(t, dir, "--render-cache", cache)
	if diff := cmp.Diff(first.Violations, second.Violations); diff != "" {
		t.Errorf("violations differ with the cache (-first +second):\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(dir, "team-b", "installplan.yaml"), []byte(installPlanYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	third, _ := checkJSON(t, dir, "--render-cache", cache)
	found := false
	for _, v := range third.Violations {
		found = found || v.Rule == "OP010" && v.App == "team-b"
	}
	if !found {
		t.Errorf("the InstallPlan added to team-b was not seen (a stale build was used): %+v", third.Violations)
	}
}

// TestGlobalCatalogNamespaceIsOneSetting: `olmsync check` and `olmsync run` default to the
// same global catalog namespace, and check's --global-catalog-namespace is the namespace
// the placement rules hold CatalogSources to, over olmsync.yaml's (docs/olm.md, "One
// global catalog namespace").
func TestGlobalCatalogNamespaceIsOneSetting(t *testing.T) {
	if render.DefaultMarketplaceNamespace != policy.DefaultMarketplaceNamespace {
		t.Errorf("defaults: olmsync.yaml %q, policy %q: want one", render.DefaultMarketplaceNamespace, policy.DefaultMarketplaceNamespace)
	}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"olmsync.yaml": "apps:\n- {name: cluster-scope, path: cluster-scope}\npolicy:\n  operatorGroups: []\n",
		"cluster-scope/catalogsource.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata:\n  name: community\n  namespace: olm\n" +
			"spec:\n  sourceType: grpc\n  image: quay.io/example/catalog:latest\n",
	})
	out, err := run(t, "check", dir)
	wantExit(t, err, exitFindings)
	if !strings.Contains(out, `CatalogSources belong in the marketplace namespace "openshift-marketplace"`) {
		t.Errorf("without the flag: want OP008 against openshift-marketplace:\n%s", out)
	}
	out, err = run(t, "check", dir, "--global-catalog-namespace", "olm")
	if err != nil || strings.Contains(out, "OP008") {
		t.Errorf("--global-catalog-namespace olm: err %v, want no OP008:\n%s", err, out)
	}
}
