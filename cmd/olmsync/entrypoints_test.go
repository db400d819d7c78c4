package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/report"
)

// The tests of this file run `olmsync check` on real git repositories laid out as Argo
// CD, ApplicationSet, Flux and catalog users lay theirs out (issue 29): what a repository
// deploys, through its entry points, decides what an app is, in which cluster; the
// kustomization roots nothing deploys are library roots.

// Objects the repositories below hold.
const (
	// A global OperatorGroup in an individual app: OP001 (placement) where an entry
	// point deploys it, nothing in a library root.
	globalGroupIn = "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  namespace: %s\nspec: {}\n"
	// An OperatorGroup of two target namespaces: OP002 (its shape) wherever it is.
	twoTargetsGroup = "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: two\n  namespace: lib\nspec:\n  targetNamespaces: [a, b]\n"
	configMapX      = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
)

func globalGroup(ns string) string { return strings.Replace(globalGroupIn, "%s", ns, 1) }

type appRow struct{ Name, Cluster, ClusterFrom string }

func appRows(r *report.Report) []appRow {
	var out []appRow
	for _, a := range r.Apps {
		out = append(out, appRow{a.Name, a.Cluster, a.ClusterFrom})
	}
	return out
}

// violationRows are "RULE file apps" for each violation: once per source object, with
// every app that renders it.
func violationRows(r *report.Report) []string {
	var out []string
	for _, v := range r.Violations {
		var apps []string
		for _, a := range v.AppRefs() {
			apps = append(apps, a.String())
		}
		out = append(out, v.Rule+" "+v.File+" "+strings.Join(apps, ","))
	}
	return out
}

// TestEntryPointArgoApplication: an Application deploys team-a to cl1, where its global
// OperatorGroup breaks the placement rules; a kustomization root no Application deploys
// (an example folder) is a library root: its OperatorGroup of two namespaces is OP002, its
// global group no OP001.
func TestEntryPointArgoApplication(t *testing.T) {
	dir := gitopsRepo(t, map[string]string{
		"argocd/team-a.yaml":              application("team-a", originURL, "team-a", "cl1", "team-a"),
		"team-a/kustomization.yaml":       kustomization("og.yaml"),
		"team-a/og.yaml":                  globalGroup("team-a"),
		"examples/lib/kustomization.yaml": kustomization("og.yaml", "global.yaml"),
		"examples/lib/og.yaml":            twoTargetsGroup,
		"examples/lib/global.yaml":        globalGroup("lib2"),
	})
	r, err := checkJSON(t, dir)
	wantExit(t, err, exitFindings)
	want := []string{
		"OP002 examples/lib/og.yaml examples/lib",
		"OP001 team-a/og.yaml cl1/team-a",
	}
	if diff := cmp.Diff(want, errorRows(r)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]appRow{{"team-a", "cl1", "application"}, {"examples/lib", "", "none"}}, appRows(r)); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	if r.Summary.LibraryRoots != 1 {
		t.Errorf("summary %+v, want one library root", r.Summary)
	}
	out, _ := run(t, "check", dir)
	if !strings.Contains(out, "1 library root: no Argo CD Application or ApplicationSet and no Flux Kustomization of this repository deploys it") ||
		!strings.Contains(out, "list them in olmsync.yaml (apps:, with their clusters)") {
		t.Errorf("the text report does not say what a library root is and how to deploy it:\n%s", out)
	}
}

// errorRows are violationRows of the errors that are not waived.
func errorRows(r *report.Report) []string {
	rows := violationRows(r)
	var out []string
	for i, v := range r.Violations {
		if v.Severity == report.SeverityError && !v.Waived {
			out = append(out, rows[i])
		}
	}
	return out
}

// TestEntryPointApplicationSetList: a list generator deploys the cluster-scope overlay of
// each cluster it lists; an overlay it does not list (cl3) is a library root. The two
// clusters are checked apart: cl2's cluster-scope app declares team-a's group once more,
// which is no OP004 with cl1's.
func TestEntryPointApplicationSetList(t *testing.T) {
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: cluster-scope
spec:
  generators:
  - list:
      elements:
      - cluster: cl1
      - cluster: cl2
  template:
    metadata:
      name: 'cluster-scope-{{cluster}}'
    spec:
      project: default
      source:
        repoURL: https://github.com/acme/gitops
        path: 'cluster-scope/overlays/{{ cluster }}'
      destination:
        name: '{{cluster}}'
`
	dir := gitopsRepo(t, map[string]string{
		"argocd/cluster-scope.yaml":                     set,
		"cluster-scope/base/kustomization.yaml":         kustomization("ns.yaml", "og.yaml"),
		"cluster-scope/base/ns.yaml":                    namespaceTeamA,
		"cluster-scope/base/og.yaml":                    groupTeamA,
		"cluster-scope/overlays/cl1/kustomization.yaml": kustomization("../../base"),
		"cluster-scope/overlays/cl2/kustomization.yaml": kustomization("../../base"),
		"cluster-scope/overlays/cl3/kustomization.yaml": kustomization("../../base", "og.yaml"),
		"cluster-scope/overlays/cl3/og.yaml":            strings.Replace(groupTeamA, "name: team-a\n  namespace", "name: second\n  namespace", 1),
	})
	r, err := checkJSON(t, dir)
	// cl3's overlay, which nothing deploys, has two groups in team-a: OP004 within the
	// library root, not across clusters.
	wantExit(t, err, exitFindings)
	want := []appRow{
		{"cluster-scope-cl1", "cl1", "application"},
		{"cluster-scope-cl2", "cl2", "application"},
		{"cluster-scope/overlays/cl3", "", "none"},
	}
	if diff := cmp.Diff(want, appRows(r)); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	for _, row := range errorRows(r) {
		if !strings.HasPrefix(row, "OP004 ") || !strings.HasSuffix(row, " cluster-scope/overlays/cl3") {
			t.Errorf("error %q: want only cl3's library root's OP004", row)
		}
	}
	if len(errorRows(r)) != 2 {
		t.Errorf("errors %q, want cl3's two OperatorGroups", errorRows(r))
	}
	for _, a := range r.Apps {
		if strings.HasPrefix(a.Name, "cluster-scope-") && !a.ClusterScope {
			t.Errorf("app %s is not the cluster-scope app of its cluster", a.Name)
		}
	}
}

// TestEntryPointApplicationSetGit: a matrix of a git files generator (one config file per
// cluster) and a git directories generator (one folder per team), in Go templates, deploys
// every team to every cluster; a team folder the pattern excludes is a library root.
func TestEntryPointApplicationSetGit(t *testing.T) {
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: teams
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - matrix:
      generators:
      - git:
          repoURL: git@github.com:acme/gitops.git
          revision: HEAD
          files:
          - path: "clusters/*/cluster.json"
      - git:
          repoURL: git@github.com:acme/gitops.git
          revision: HEAD
          directories:
          - path: teams/*
          - path: teams/sandbox
            exclude: true
  template:
    metadata:
      name: '{{ .path.basename }}-{{ .cluster.name }}'
    spec:
      source:
        repoURL: git@github.com:acme/gitops.git
        path: '{{ .path.path }}'
      destination:
        name: '{{ .cluster.name }}'
        namespace: '{{ .path.basename | lower }}'
`
	dir := gitopsRepo(t, map[string]string{
		"argocd/teams.yaml":                set,
		"clusters/east/cluster.json":       `{"cluster": {"name": "east"}}`,
		"clusters/west/cluster.json":       `{"cluster": {"name": "west"}}`,
		"teams/team-a/kustomization.yaml":  kustomization("og.yaml"),
		"teams/team-a/og.yaml":             globalGroup("team-a"),
		"teams/team-b/cm.yaml":             configMapX,
		"teams/sandbox/kustomization.yaml": kustomization("og.yaml"),
		"teams/sandbox/og.yaml":            globalGroup("sandbox"),
	})
	r, err := checkJSON(t, dir)
	wantExit(t, err, exitFindings)
	want := []appRow{
		{"team-a-east", "east", "application"},
		{"team-b-east", "east", "application"},
		{"team-a-west", "west", "application"},
		{"team-b-west", "west", "application"},
		{"teams/sandbox", "", "none"},
	}
	if diff := cmp.Diff(want, appRows(r)); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	// One OP001 for team-a's group, found in two clusters: one finding, both apps.
	if diff := cmp.Diff([]string{"OP001 teams/team-a/og.yaml east/team-a-east,west/team-a-west"}, errorRows(r)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if r.Summary.Errors != 1 {
		t.Errorf("summary counts %d errors, want 1 (one object)", r.Summary.Errors)
	}
}

// TestEntryPointApplicationSetClusters: a clusters generator over the Argo CD cluster
// Secrets the repository declares, selected by label; a generator olmsync cannot expand
// (a pull request generator) is a warning, and what it would deploy stays a library root.
func TestEntryPointApplicationSetClusters(t *testing.T) {
	secret := func(name, env string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  labels:\n    argocd.argoproj.io/secret-type: cluster\n    env: " + env +
			"\nstringData:\n  name: " + name + "\n  server: https://" + name + ".example.com\n"
	}
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: prod
spec:
  generators:
  - clusters:
      selector:
        matchLabels:
          env: prod
  template:
    metadata:
      name: 'team-a-{{name}}'
    spec:
      source:
        repoURL: https://github.com/acme/gitops
        path: team-a
      destination:
        server: '{{server}}'
        namespace: team-a
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: previews
spec:
  generators:
  - pullRequest:
      github: {owner: acme, repo: gitops}
  template:
    metadata:
      name: 'preview-{{number}}'
    spec:
      source:
        repoURL: https://github.com/acme/gitops
        path: preview
      destination:
        name: in-cluster
`
	dir := gitopsRepo(t, map[string]string{
		"argocd/sets.yaml":           set,
		"argocd/clusters/prod1.yaml": secret("prod1", "prod"),
		"argocd/clusters/dev1.yaml":  secret("dev1", "dev"),
		"team-a/kustomization.yaml":  kustomization("cm.yaml"),
		"team-a/cm.yaml":             configMapX,
		"preview/kustomization.yaml": kustomization("cm.yaml"),
		"preview/cm.yaml":            configMapX,
	})
	r, err := checkJSON(t, dir)
	wantExit(t, err, 0)
	want := []appRow{{"team-a-prod1", "https://prod1.example.com", "application"}, {"preview", "", "none"}}
	if diff := cmp.Diff(want, appRows(r)); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	if !slices.ContainsFunc(r.Warnings, func(w report.Warning) bool {
		return w.File == "argocd/sets.yaml" && strings.Contains(w.Message, `ApplicationSet "previews": generators[0] is not expanded: its pullRequest generator takes its parameters from outside the repository`)
	}) {
		t.Errorf("no warning about the pull request generator: %+v", r.Warnings)
	}
}

// TestEntryPointFlux: Flux's layout. clusters/prod/ holds the bootstrap GitRepository of
// this repository and its Kustomizations: one applies apps/prod, a folder without a
// kustomization (built as Flux builds it, its values file left out) into team-a; one
// points at another repository's GitRepository and is not checked. The Kustomization an
// app applies from a folder outside clusters/ is on that app's cluster.
func TestEntryPointFlux(t *testing.T) {
	ks := func(name, path, source, target string) string {
		s := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name +
			"\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: " + path + "\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: " + source + "\n"
		if target != "" {
			s += "  targetNamespace: " + target + "\n"
		}
		return s
	}
	gitRepo := func(name, url string) string {
		return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: " + name +
			"\n  namespace: flux-system\nspec:\n  interval: 1m\n  url: " + url + "\n  ref:\n    branch: main\n"
	}
	dir := gitopsRepo(t, map[string]string{
		"clusters/prod/flux-system/gotk-sync.yaml":     gitRepo("flux-system", "ssh://git@github.com/acme/gitops") + "---\n" + ks("flux-system", "./clusters/prod", "flux-system", ""),
		"clusters/prod/flux-system/kustomization.yaml": kustomization("gotk-sync.yaml"),
		"clusters/prod/apps.yaml":                      ks("apps", "./apps/prod", "flux-system", "team-a"),
		"clusters/prod/platform.yaml":                  gitRepo("platform", "https://github.com/acme/platform") + "---\n" + ks("platform", "./deploy", "platform", ""),
		"clusters/prod/nested.yaml":                    ks("nested", "./nested", "flux-system", ""),
		"apps/prod/og.yaml":                            globalGroup("team-a"),
		"apps/prod/values.yaml":                        "replicas: 3\n",
		"apps/prod/extra/kustomization.yaml":           kustomization("cm.yaml"),
		"apps/prod/extra/cm.yaml":                      configMapX,
		"nested/ks.yaml":                               ks("inner", "./inner", "flux-system", "inner"),
		"inner/cm.yaml":                                configMapX,
	})
	r, err := checkJSON(t, dir, "--list-objects")
	wantExit(t, err, exitFindings)
	want := []appRow{
		{"apps", "prod", "flux"},
		{"flux-system", "prod", "flux"},
		{"inner", "prod", "flux"},
		{"nested", "prod", "flux"},
	}
	if diff := cmp.Diff(want, appRows(r)); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"OP001 apps/prod/og.yaml prod/apps"}, errorRows(r)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Kustomization flux-system/platform"}, notCheckedNames(r)); diff != "" {
		t.Errorf("not checked (-want +got):\n%s", diff)
	}
	// The generated kustomization took the folder's objects and the folder below with a
	// kustomization of its own, in the target namespace; not the values file.
	var objects []string
	for _, o := range r.Objects {
		if o.App == "apps" {
			objects = append(objects, o.Object.Kind+" "+o.Object.Namespace+"/"+o.Object.Name+" "+o.File)
		}
	}
	slices.Sort(objects)
	if diff := cmp.Diff([]string{"ConfigMap team-a/x apps/prod/extra/cm.yaml", "OperatorGroup team-a/og apps/prod/og.yaml"}, objects); diff != "" {
		t.Errorf("objects of app apps (-want +got):\n%s", diff)
	}
}

// TestEntryPointLibraryRootsOnly: a catalog repository — each operator a base and channel
// overlays, nothing deploying them — is checked root by root, without the placement
// rules: a Subscription whose namespace has no OperatorGroup in its root is OP005, reported
// once for the base every overlay includes; two operators' entries that use the same
// namespace are not compared (no OP004); a Namespace and global groups are no OP011 or
// OP001.
func TestEntryPointLibraryRootsOnly(t *testing.T) {
	sub := func(name, ns string) string {
		return "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
			"\nspec:\n  channel: patch-me\n  name: " + name + "\n  source: redhat-operators\n  sourceNamespace: openshift-marketplace\n"
	}
	ns := func(name string) string { return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + "\n" }
	og := func(name, ns string) string {
		return "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec: {}\n"
	}
	overlay := "resources:\n- ../../base\npatches:\n- target: {kind: Subscription}\n  patch: |-\n    - op: replace\n      path: /spec/channel\n      value: stable\n"
	dir := gitopsRepo(t, map[string]string{
		"loki/operator/base/kustomization.yaml":              kustomization("ns.yaml", "sub.yaml"),
		"loki/operator/base/ns.yaml":                         ns("openshift-operators-redhat"),
		"loki/operator/base/sub.yaml":                        sub("loki", "openshift-operators-redhat"),
		"loki/operator/overlays/stable/kustomization.yaml":   overlay,
		"loki/operator/overlays/stable-6/kustomization.yaml": overlay,
		"es/operator/base/kustomization.yaml":                kustomization("ns.yaml", "og.yaml", "sub.yaml"),
		"es/operator/base/ns.yaml":                           ns("openshift-operators-redhat"),
		"es/operator/base/og.yaml":                           og("es", "openshift-operators-redhat"),
		"es/operator/base/sub.yaml":                          sub("es", "openshift-operators-redhat"),
		"es/operator/overlays/stable/kustomization.yaml":     overlay,
		"fence/operator/base/kustomization.yaml":             kustomization("og.yaml", "sub.yaml"),
		"fence/operator/base/og.yaml":                        og("fence", "workload-availability"),
		"fence/operator/base/sub.yaml":                       sub("fence", "workload-availability"),
		"fence/operator/overlays/stable/kustomization.yaml":  overlay,
		"nhc/operator/base/kustomization.yaml":               kustomization("og.yaml", "sub.yaml"),
		"nhc/operator/base/og.yaml":                          og("nhc", "workload-availability"),
		"nhc/operator/base/sub.yaml":                         sub("nhc", "workload-availability"),
		"nhc/operator/overlays/stable/kustomization.yaml":    overlay,
	})
	r, err := checkJSON(t, dir)
	wantExit(t, err, exitFindings)
	want := []string{"OP005 loki/operator/base/sub.yaml loki/operator/overlays/stable,loki/operator/overlays/stable-6"}
	if diff := cmp.Diff(want, errorRows(r)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if r.Summary.LibraryRoots != 5 || r.Summary.Apps != 5 {
		t.Errorf("summary %+v, want 5 apps, all library roots", r.Summary)
	}
}

// TestCheckHelmTemplateIsNotRead: a Helm chart's template — a Subscription with Go
// template actions, an Argo CD annotation in it — beside a kustomization was parsed as YAML
// while looking for Applications: a problem with no app, exit 2. Nothing renders a chart
// by itself, so nothing reads its files.
func TestCheckHelmTemplateIsNotRead(t *testing.T) {
	template := `apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: {{ .Values.name }}
  annotations:
    argocd.argoproj.io/sync-wave: "1"
spec:
  {{- with .Values.startingCSV }}
  startingCSV: {{ . }}
  {{- end }}
  name: {{ .Values.name }}
`
	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		{"beside a kustomization", map[string]string{
			"chart/Chart.yaml":                  "apiVersion: v2\nname: x\nversion: 0.1.0\n",
			"chart/templates/subscription.yaml": template,
			"app/kustomization.yaml":            kustomization("cm.yaml"),
			"app/cm.yaml":                       configMapX,
		}},
		{"in a repository of plain manifests", map[string]string{
			"chart/Chart.yaml":                  "apiVersion: v2\nname: x\nversion: 0.1.0\n",
			"chart/templates/subscription.yaml": template,
			"manifests/cm.yaml":                 configMapX,
		}},
		{"a template outside a chart", map[string]string{
			"templates/subscription.yaml": template,
			"app/kustomization.yaml":      kustomization("cm.yaml"),
			"app/cm.yaml":                 configMapX,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := checkJSON(t, gitopsRepo(t, tc.files))
			wantExit(t, err, 0)
			if len(r.Problems) != 0 {
				t.Errorf("problems: %+v", r.Problems)
			}
		})
	}
}

// TestCheckMalformedEntryPoints: an ApplicationSet without generators and a Flux
// Kustomization whose spec is not a mapping are problems naming their file and line; the
// rest of the repository is still checked.
func TestCheckMalformedEntryPoints(t *testing.T) {
	dir := gitopsRepo(t, map[string]string{
		"argocd/set.yaml":       "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: broken\nspec:\n  template: {}\n",
		"clusters/prod/ks.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: bad\nspec: [not, a, mapping]\n",
		"argocd/team-a.yaml":    application("team-a", originURL, "team-a", "cl1", "team-a"),
		"team-a/og.yaml":        globalGroup("team-a"),
	})
	r, err := checkJSON(t, dir)
	wantExit(t, err, exitUsage)
	var problems []string
	for _, p := range r.Problems {
		problems = append(problems, location(p.File, p.Line))
	}
	slices.Sort(problems)
	if diff := cmp.Diff([]string{"argocd/set.yaml:1", "clusters/prod/ks.yaml:5"}, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s\n%+v", diff, r.Problems)
	}
	if diff := cmp.Diff([]string{"OP001 team-a/og.yaml cl1/team-a"}, errorRows(r)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func location(file string, line int) string {
	if line == 0 {
		return file
	}
	return file + ":" + strconv.Itoa(line)
}

// TestCheckPullRequestMoves: a pull request that only moves things adds no violation
// (issue 29: seven of 107 replayed pull requests failed on their moves). A folder renamed
// (its Application's name and path with it) keeps its violations pre-existing, and so does
// an object renamed with its content unchanged; a new object breaking a rule is new.
func TestCheckPullRequestMoves(t *testing.T) {
	dir := gitopsRepo(t, map[string]string{
		"argocd/team-a.yaml":        application("team-a", originURL, "team-a", "cl1", "team-a"),
		"team-a/kustomization.yaml": kustomization("og.yaml"),
		"team-a/og.yaml":            globalGroup("team-a"),
	})
	gittest.Git(t, dir, "checkout", "-q", "-b", "move")
	gittest.Git(t, dir, "mv", "team-a", "teams-a")
	gittest.Commit(t, dir, map[string]string{
		"argocd/team-a.yaml":         application("team-a-v2", originURL, "teams-a", "cl1", "team-a"),
		"teams-a/og.yaml":            strings.Replace(globalGroup("team-a"), "name: og\n", "name: og-renamed\n", 1),
		"teams-a/b.yaml":             globalGroup("team-b"),
		"teams-a/kustomization.yaml": kustomization("og.yaml", "b.yaml"),
	}, "move team-a, rename its group, add one")
	r, err := checkJSON(t, dir, "--ref", "move", "--base", "main", "--fail-on", "new")
	wantExit(t, err, exitFindings)
	var got []string
	for _, v := range r.Violations {
		if v.Severity == report.SeverityError {
			got = append(got, v.Rule+" "+v.Object.Name+" "+string(v.Status))
		}
	}
	slices.Sort(got)
	want := []string{"OP001 og new", "OP001 og-renamed pre-existing"} // team-b's group is new
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestCheckPullRequestUncheckedChanges: a pull request whose only OLM changes sit where
// nothing deploys them — a base no overlay includes, a folder no root covers, an app that
// fails to render on both sides — reported `changes: []` and passed in silence. Each such
// file is now an unchecked change, a warning in every format.
func TestCheckPullRequestUncheckedChanges(t *testing.T) {
	subscription := func(channel string) string {
		return strings.Replace(subscriptionYAML, "singlenamespace-alpha", channel, 1)
	}
	dir := gitopsRepo(t, map[string]string{
		"argocd/team-a.yaml":          application("team-a", originURL, "team-a", "cl1", "team-a"),
		"argocd/team-b.yaml":          application("team-b", originURL, "team-b", "cl1", "team-b"),
		"team-a/kustomization.yaml":   kustomization("cm.yaml"),
		"team-a/cm.yaml":              configMapX,
		"team-b/kustomization.yaml":   kustomization("sub.yaml", "missing.yaml"),
		"team-b/sub.yaml":             subscription("alpha"),
		"old/base/kustomization.yaml": kustomization("sub.yaml"),
		"old/base/sub.yaml":           subscription("alpha"),
	})
	gittest.Git(t, dir, "checkout", "-q", "-b", "change")
	gittest.Commit(t, dir, map[string]string{
		"old/base/sub.yaml": subscription("beta"),
		"team-b/sub.yaml":   subscription("beta"),
		"drafts/sub.yaml":   subscription("gamma"),
		"team-a/cm.yaml":    strings.Replace(configMapX, "name: x", "name: y", 1),
	}, "change what nothing checks")
	r, err := checkJSON(t, dir, "--ref", "change", "--base", "main", "--fail-on", "new")
	wantExit(t, err, 0) // team-b's failure is pre-existing
	var unchecked []string
	for _, w := range r.Warnings {
		if w.Unchecked {
			unchecked = append(unchecked, w.File+": "+w.Message[:strings.Index(w.Message, " here")])
		}
	}
	want := []string{
		`drafts/sub.yaml: unchecked change: this change adds Subscription "etcd"`,
		`old/base/sub.yaml: unchecked change: this change changes Subscription "etcd"`,
		`team-b/sub.yaml: unchecked change: this change changes Subscription "etcd"`,
	}
	if diff := cmp.Diff(want, unchecked); diff != "" {
		t.Errorf("unchecked changes (-want +got):\n%s", diff)
	}
	if r.Summary.UncheckedChanges != 3 {
		t.Errorf("summary %+v, want 3 unchecked changes", r.Summary)
	}
	for _, format := range []string{"text", "github", "markdown", "sarif", "junit"} {
		out, _ := run(t, "check", dir, "--ref", "change", "--base", "main", "--fail-on", "new", "-o", format)
		if !strings.Contains(out, "drafts/sub.yaml") || !strings.Contains(out, "unchecked change") {
			t.Errorf("-o %s does not list the unchecked change:\n%s", format, out)
		}
	}
}
