package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/render/rendertest"
	"github.com/olmsync/olmsync/report"
)

// The tests of this file reproduce what a new user met running `olmsync check` on a large
// public GitOps monorepo with no olmsync.yaml (issue 11), each on a real git repository
// whose remote origin names it, and show the verdict olmsync gives now.

const originURL = "https://github.com/acme/gitops.git"

// gitopsRepo makes a repository with origin set the way a CI checkout has it (a token in
// the URL) and one commit of files.
func gitopsRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := gittest.Init(t)
	gittest.Git(t, dir, "remote", "add", "origin", "https://x-access-token:t0ken@github.com/acme/gitops.git")
	gittest.Commit(t, dir, files, "initial")
	return dir
}

// application is an Argo CD Application of repository repo (its URL) deploying path to
// cluster, namespace.
func application(name, repo, path, cluster, namespace string) string {
	return strings.Replace(rendertest.Application(name, path, cluster, namespace),
		"https://github.com/org/apps", repo, 1)
}

func kustomization(resources ...string) string {
	return "resources:\n- " + strings.Join(resources, "\n- ") + "\n"
}

const (
	namespaceTeamA = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n"
	groupTeamA     = "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: team-a\n  namespace: team-a\nspec:\n  targetNamespaces: [team-a]\n"
	clusterRoleX   = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: x\nrules: []\n"
)

func violationIDs(r *report.Report) []string {
	var out []string
	for _, v := range r.Violations {
		out = append(out, v.Rule+" "+v.File+" "+string(v.Status))
	}
	return out
}

func notCheckedNames(r *report.Report) []string {
	var out []string
	for _, n := range r.NotChecked {
		out = append(out, n.Kind+" "+n.Name)
	}
	return out
}

// TestCheckForeignApplicationsAndCoverage: Applications of another repository were taken
// to be of this one, their paths "missing" (exit 2 on every run); roots no Application
// covers were not checked; one cluster's overlay collided with another's; a dead base was
// checked as an app. Now: the foreign ones are listed as not checked, every root is
// checked once, and the dead base is left out. The roots no Application of this
// repository deploys are library roots (issue 29): checked on their own, without the
// placement rules, so team-a's ClusterRole outside the cluster-scope app is no OP011 —
// nothing says team-a's overlay is deployed as an app at all.
func TestCheckForeignApplicationsAndCoverage(t *testing.T) {
	const other = "https://github.com/acme/platform-config"
	dir := gitopsRepo(t, map[string]string{
		"argocd/foreign-1.yaml": application("monitoring", other, "monitoring/overlays/prod", "cl1", "monitoring"),
		"argocd/foreign-2.yaml": application("logging", "git@github.com:acme/platform-config.git", "logging", "cl2", "logging"),
		"argocd/cs-cl1.yaml":    application("cluster-scope-cl1", "git@github.com:ACME/gitops", "cluster-scope/overlays/prod/cl1", "cl1", ""),
		// cl1's cluster-scope app, deployed by the Application above.
		"cluster-scope/overlays/prod/cl1/kustomization.yaml": kustomization("../../../base"),
		"cluster-scope/base/kustomization.yaml":              kustomization("ns.yaml", "og.yaml"),
		"cluster-scope/base/ns.yaml":                         namespaceTeamA,
		"cluster-scope/base/og.yaml":                         groupTeamA,
		// cl2's, which no Application deploys: the same OperatorGroup, on another cluster.
		"cluster-scope/overlays/prod/cl2/kustomization.yaml": kustomization("../../../base"),
		// team-a's overlay for cl1, which no Application deploys, with a ClusterRole (OP011).
		"team-a/overlays/cl1/kustomization.yaml": kustomization("../../base"),
		"team-a/base/kustomization.yaml":         kustomization("rbac.yaml"),
		"team-a/base/rbac.yaml":                  clusterRoleX,
		// A base no overlay includes any more, with an InstallPlan (OP010): dead code.
		"apps/retired/base/kustomization.yaml": kustomization("installplan.yaml"),
		"apps/retired/base/installplan.yaml":   installPlanYAML,
	})
	r, err := checkJSON(t, dir)
	wantExit(t, err, 0)
	if diff := cmp.Diff([]string(nil), violationIDs(r)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if len(r.Problems) != 0 {
		t.Errorf("problems: %+v", r.Problems)
	}
	wantNotChecked := []string{"Kustomization apps/retired/base", "Application monitoring", "Application logging"}
	if diff := cmp.Diff(wantNotChecked, notCheckedNames(r)); diff != "" {
		t.Errorf("not checked (-want +got):\n%s", diff)
	}
	type app struct{ Name, Cluster, ClusterFrom string }
	var apps []app
	for _, a := range r.Apps {
		apps = append(apps, app{a.Name, a.Cluster, a.ClusterFrom})
	}
	wantApps := []app{
		{"cluster-scope-cl1", "cl1", "application"},
		{"cluster-scope/overlays/prod/cl2", "", "none"},
		{"team-a/overlays/cl1", "", "none"},
	}
	if diff := cmp.Diff(wantApps, apps); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
}

// TestCheckOnlyForeignApplication: at a revision whose only Application points
// elsewhere, discovery found no app of its own and checked nothing, so every OLM change
// of that period passed. Now the kustomization roots are checked.
func TestCheckOnlyForeignApplication(t *testing.T) {
	dir := gitopsRepo(t, map[string]string{
		"argocd/foreign.yaml":              application("other", "https://github.com/acme/other", "x", "in-cluster", "x"),
		"team-a/kustomization.yaml":        kustomization("installplan.yaml"),
		"team-a/installplan.yaml":          installPlanYAML,
		"cluster-scope/kustomization.yaml": kustomization("ns.yaml"),
		"cluster-scope/ns.yaml":            namespaceTeamA,
	})
	r, err := checkJSON(t, dir)
	wantExit(t, err, exitFindings)
	if diff := cmp.Diff([]string{"OP010 team-a/installplan.yaml "}, violationIDs(r)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if r.Summary.Apps != 2 || r.Summary.NotChecked != 1 {
		t.Errorf("summary %+v", r.Summary)
	}
}

// TestCheckUnknownClustersAreNotCompared: two kustomization roots that no Application
// deploys and no path convention places may be two clusters; their OperatorGroups of the
// same namespace were a false OP004 (and OP006) in one "default cluster".
func TestCheckUnknownClustersAreNotCompared(t *testing.T) {
	global := "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: global\n  namespace: team-a\n"
	sub := strings.Replace(subscriptionYAML, "  name: etcd\nspec:", "  name: etcd\n  namespace: team-a\nspec:", 1)
	dir := gitopsRepo(t, map[string]string{
		// The roots are apps, as when the entry points that deploy them live in another
		// repository; without this they would be library roots.
		"olmsync.yaml":                 "discovery:\n  uncoveredRoots: apps\n",
		"site-east/kustomization.yaml": kustomization("ns.yaml", "og.yaml"),
		"site-east/ns.yaml":            namespaceTeamA,
		"site-east/og.yaml":            groupTeamA,
		"site-west/kustomization.yaml": kustomization("og.yaml", "sub.yaml"),
		"site-west/og.yaml":            global,
		"site-west/sub.yaml":           sub,
	})
	r, err := checkJSON(t, dir)
	// site-west alone still breaks the rules it breaks on its own: its global group and
	// its Subscription are in one app, not the cluster-scope app (OP001, OP006, OP012).
	for _, v := range r.Violations {
		if v.Rule == "OP004" {
			t.Errorf("OP004 across two roots of unknown clusters: %+v", v)
		}
		if v.Rule == "OP006" && v.App != "site-west" {
			t.Errorf("OP006 across two roots: %+v", v)
		}
	}
	for _, a := range r.Apps {
		if a.ClusterFrom != "unknown" {
			t.Errorf("app %s: cluster from %q, want unknown", a.Name, a.ClusterFrom)
		}
	}
	wantExit(t, err, exitFindings)
}

// TestCheckRenderFailureBelongsToItsApp: a kustomize v4-era `patches:` list of file
// names failed the app with a problem alone; its violations vanished. Now the failure is
// on the app, with file, line and the fix, and the base's violations of the app are
// unknown, not resolved; the app rendered on the base, so the failure is new and fails
// even --fail-on new.
func TestCheckRenderFailureBelongsToItsApp(t *testing.T) {
	dir := gitopsRepo(t, map[string]string{
		"team-a/kustomization.yaml": kustomization("installplan.yaml"),
		"team-a/installplan.yaml":   installPlanYAML,
	})
	gittest.Git(t, dir, "checkout", "-q", "-b", "feature")
	gittest.Commit(t, dir, map[string]string{
		"team-a/kustomization.yaml": "resources:\n- installplan.yaml\npatches:\n- patch.yaml\n",
		"team-a/patch.yaml":         "apiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nmetadata:\n  name: ip\nspec: {approved: true}\n",
	}, "kustomize v4 patches")
	r, err := checkJSON(t, dir, "--base", "main", "--fail-on", "new")
	wantExit(t, err, exitUsage)
	if len(r.Apps) != 1 || r.Apps[0].Error == nil {
		t.Fatalf("apps: %+v", r.Apps)
	}
	e := r.Apps[0].Error
	if e.File != "team-a/kustomization.yaml" || e.Line != 4 || e.Status != report.StatusNew ||
		!strings.Contains(e.Hint, "write `- path: patch.yaml`") {
		t.Errorf("app error: %+v", e)
	}
	if diff := cmp.Diff([]string{"OP010 team-a/installplan.yaml unknown"}, violationIDs(r)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if len(r.Problems) != 1 || r.Problems[0].App != "team-a" || r.Problems[0].Hint == "" {
		t.Errorf("problems: %+v", r.Problems)
	}
	out, _ := run(t, "check", dir, "--base", "main")
	if !strings.Contains(out, "hint: patches entries are objects in kustomize v5") {
		t.Errorf("the text report gives no hint:\n%s", out)
	}
}

// TestCheckFailOnNewIgnoresOldProblems: problems the base branch already had (a stale
// Application path) made every pull request red. Under --fail-on new they are reported as
// pre-existing and do not fail; a new one does.
func TestCheckFailOnNewIgnoresOldProblems(t *testing.T) {
	dir := gitopsRepo(t, map[string]string{
		"argocd/stale.yaml":         application("stale", originURL, "apps/removed-long-ago", "cl1", "x"),
		"team-a/kustomization.yaml": kustomization("ns.yaml"),
		"team-a/ns.yaml":            namespaceTeamA,
	})
	gittest.Git(t, dir, "checkout", "-q", "-b", "feature")
	gittest.Commit(t, dir, map[string]string{"team-a/ns.yaml": namespaceTeamA + "  labels: {team: a}\n"}, "a label")

	r, err := checkJSON(t, dir, "--base", "main", "--fail-on", "new")
	wantExit(t, err, 0)
	if len(r.Problems) != 2 || r.Problems[0].Status != report.StatusPreExisting || !r.Problems[1].Base {
		t.Errorf("problems: %+v", r.Problems)
	}
	// Without --fail-on new, the check cannot pass.
	_, err = checkJSON(t, dir, "--base", "main")
	wantExit(t, err, exitUsage)

	// A second stale path is new: it fails.
	gittest.Commit(t, dir, map[string]string{"argocd/new.yaml": application("new", originURL, "apps/typo", "cl1", "y")}, "typo")
	r, err = checkJSON(t, dir, "--base", "main", "--fail-on", "new")
	wantExit(t, err, exitUsage)
	var statuses []string
	for _, p := range r.Problems {
		if !p.Base {
			statuses = append(statuses, p.File+" "+string(p.Status))
		}
	}
	if diff := cmp.Diff([]string{"argocd/new.yaml new", "argocd/stale.yaml pre-existing"}, statuses); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestCheckSubscriptionCatalogNamespace: a Subscription whose catalog is in a namespace
// OLM never searches passed every rule.
func TestCheckSubscriptionCatalogNamespace(t *testing.T) {
	sub := strings.Replace(subscriptionYAML, "sourceNamespace: openshift-marketplace", "sourceNamespace: my-catalogs", 1)
	dir := gitopsRepo(t, map[string]string{
		"cluster-scope/kustomization.yaml": kustomization("ns.yaml", "og.yaml"),
		"cluster-scope/ns.yaml":            namespaceTeamA,
		"cluster-scope/og.yaml":            groupTeamA,
		"team-a/kustomization.yaml":        "namespace: team-a\nresources:\n- sub.yaml\n",
		"team-a/sub.yaml":                  sub,
	})
	r, err := checkJSON(t, dir)
	wantExit(t, err, exitFindings)
	if diff := cmp.Diff([]string{"OP014 team-a/sub.yaml "}, violationIDs(r)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestCheckOutputFlags: `check -o json` wrote a text report into a file named "json"
// and exited 0. -o is the format, as everywhere else; --output-file the file.
func TestCheckOutputFlags(t *testing.T) {
	dir := gitopsRepo(t, map[string]string{
		"gitops/team-a/kustomization.yaml": kustomization("installplan.yaml"),
		"gitops/team-a/installplan.yaml":   installPlanYAML,
	})
	t.Chdir(t.TempDir())
	out, err := run(t, "check", filepath.Join(dir, "gitops"), "-o", "json")
	wantExit(t, err, exitFindings)
	var r report.Report
	if jerr := json.Unmarshal([]byte(out), &r); jerr != nil || r.Kind != "Report" {
		t.Fatalf("-o json did not write the JSON report (%v):\n%s", jerr, out)
	}
	if _, err := os.Stat("json"); !os.IsNotExist(err) {
		t.Errorf("a file named json was written (%v)", err)
	}

	// SARIF to a file; a GitOps folder inside a repository annotates paths from its top.
	file := filepath.Join(t.TempDir(), "olmsync.sarif")
	out, err = run(t, "check", filepath.Join(dir, "gitops"), "-o", "sarif", "--output-file", file)
	wantExit(t, err, exitFindings)
	data, rerr := os.ReadFile(file)
	if rerr != nil || out != "" {
		t.Fatalf("SARIF file: %v; standard output %q", rerr, out)
	}
	if !strings.Contains(string(data), `"uri": "gitops/team-a/installplan.yaml"`) {
		t.Errorf("SARIF locations are not relative to the repository's top:\n%s", data)
	}
	// --path-prefix says otherwise.
	out, _ = run(t, "check", filepath.Join(dir, "gitops"), "-o", "github", "--path-prefix", "")
	if !strings.Contains(out, "file=team-a/installplan.yaml,") {
		t.Errorf("--path-prefix '' did not take the prefix off:\n%s", out)
	}

	// The old spelling still works.
	out, err = run(t, "check", filepath.Join(dir, "gitops"), "--format", "json")
	wantExit(t, err, exitFindings)
	// (run merges standard error, where the deprecation notice goes, into out)
	out = strings.TrimPrefix(out, "Flag --format has been deprecated, use -o/--output for the format and --output-file for the file\n")
	if !json.Valid([]byte(out)) {
		t.Errorf("--format json:\n%s", out)
	}

	for _, args := range [][]string{{"check", dir, "-o", "yaml"}, {"apps", dir, "-o", "yaml"}, {"version", "-o", "yaml"}} {
		_, err := run(t, args...)
		wantExit(t, err, exitUsage)
	}

	version = "v9.8.7"
	t.Cleanup(func() { version = "" })
	out, err = run(t, "--version")
	if err != nil || out != "olmsync v9.8.7\n" {
		t.Errorf("--version = %q, %v", out, err)
	}
}

// TestAppsListsWhatIsNotChecked: `olmsync apps` says where the repository's URL came
// from, and what it leaves out.
func TestAppsListsWhatIsNotChecked(t *testing.T) {
	dir := gitopsRepo(t, map[string]string{
		"argocd/foreign.yaml":         application("other", "https://github.com/acme/other", "x", "in-cluster", "x"),
		"team-a/kustomization.yaml":   kustomization("ns.yaml"),
		"team-a/ns.yaml":              namespaceTeamA,
		"old/base/kustomization.yaml": kustomization("ns.yaml"),
	})
	out, err := run(t, "apps", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"github.com/acme/gitops.git (the git remote)",
		"Not checked:",
		`Application "other"`,
		"old/base",
		"library roots: no entry point of this repository deploys them",
		"  team-a\n      path:      team-a\n      found:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("apps output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "t0ken") {
		t.Errorf("the remote's credentials are printed:\n%s", out)
	}
	// olmsync.yaml's repoURLs win over the remote: the other Application is then this
	// repository's, and its path is missing.
	gittest.Write(t, dir, map[string]string{"olmsync.yaml": "repoURLs: [https://github.com/acme/other]\n"})
	out, err = run(t, "apps", dir)
	if err != nil || !strings.Contains(out, `path "x" does not exist in this repository`) ||
		!strings.Contains(out, "https://github.com/acme/other (olmsync.yaml repoURLs)") {
		t.Errorf("with repoURLs naming the other repository (error %v):\n%s", err, out)
	}
}
