package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/render/rendertest"
)

// appSummary is what discovery tests compare: the decisions, not the prose.
type appSummary struct {
	Name, Path, Namespace, Cluster string
	ClusterScope, Recurse          bool
	Method                         Method
	File                           string
	Line                           int
	ClusterFrom                    ClusterFrom
}

func summarize(apps []App) []appSummary {
	var out []appSummary
	for _, a := range apps {
		out = append(out, appSummary{a.Name, a.Path, a.Namespace, a.Cluster, a.ClusterScope, a.Recurse, a.Found.Method, a.Found.File, a.Found.Line, a.ClusterFrom})
	}
	return out
}

type problemSummary struct {
	Reason Reason
	File   string
	Line   int
}

func summarizeProblems(ds []Diagnostic) []problemSummary {
	var out []problemSummary
	for _, d := range ds {
		out = append(out, problemSummary{d.Reason, d.File, d.Line})
	}
	return out
}

const kustomizationOf = "resources:\n- ns.yaml\n"
const nsYAML = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n"

func TestDiscover(t *testing.T) {
	tests := []struct {
		name         string
		repo         files
		wantMethod   Method
		wantApps     []appSummary
		wantProblems []problemSummary
		wantForeign  []string
	}{
		{
			name: "config apps are the only apps; cluster-scope from config or path",
			repo: files{
				"olmsync.yaml": `
apps:
- name: cs
  path: cluster-scope/overlays/prod/emea/cl1
  cluster: cl1
- name: forced-off
  path: cluster-scope/overlays/prod/emea/cl2
  cluster: cl2
  clusterScope: false
- name: team
  path: apps/team/
  namespace: team
  cluster: cl1
- name: forced-on
  path: platform
  clusterScope: true
  recurse: true
`,
				"argocd/app.yaml": argoApp("ignored", "apps/team", "in-cluster", "x"),
			},
			wantMethod: MethodConfig,
			wantApps: []appSummary{
				{"forced-on", "platform", "", "", true, true, MethodConfig, "olmsync.yaml", 13, ClusterFromConfig},
				{"cs", "cluster-scope/overlays/prod/emea/cl1", "", "cl1", true, false, MethodConfig, "olmsync.yaml", 2, ClusterFromConfig},
				{"team", "apps/team", "team", "cl1", false, false, MethodConfig, "olmsync.yaml", 9, ClusterFromConfig},
				{"forced-off", "cluster-scope/overlays/prod/emea/cl2", "", "cl2", false, false, MethodConfig, "olmsync.yaml", 5, ClusterFromConfig},
			},
		},
		{
			name: "argo CD applications, app-of-apps folder, clusters by name and server",
			repo: files{
				"argocd/root.yaml":               argoApp("root", "argocd/apps", "in-cluster", "argocd"),
				"argocd/apps/kustomization.yaml": "resources:\n- cl1.yaml\n- team.yaml\n",
				"argocd/apps/cl1.yaml":           argoApp("cluster-scope-cl1", "cluster-scope/overlays/prod/emea/cl1", "cl1", ""),
				"argocd/apps/team.yaml": `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: team
spec:
  destination:
    server: https://api.cl2.example.com:6443
    namespace: team
  source:
    repoURL: https://github.com/org/apps
    path: apps/team/overlays/cl2
    directory:
      recurse: true
`,
				"cluster-scope/overlays/prod/emea/cl1/kustomization.yaml": kustomizationOf,
				"cluster-scope/overlays/prod/emea/cl1/ns.yaml":            nsYAML,
				"apps/team/overlays/cl2/ns.yaml":                          nsYAML,
			},
			wantMethod: MethodArgoCD,
			wantApps: []appSummary{
				{"cluster-scope-cl1", "cluster-scope/overlays/prod/emea/cl1", "", "cl1", true, false, MethodArgoCD, "argocd/apps/cl1.yaml", 1, ClusterFromApplication},
				{"team", "apps/team/overlays/cl2", "team", "https://api.cl2.example.com:6443", false, true, MethodArgoCD, "argocd/apps/team.yaml", 1, ClusterFromApplication},
				{"root", "argocd/apps", "argocd", "in-cluster", false, false, MethodArgoCD, "argocd/root.yaml", 1, ClusterFromApplication},
			},
		},
		{
			name: "missing path, local helm chart, plugin, a malformed ApplicationSet are problems; other repositories are not; an uncovered root is a library root",
			repo: files{
				"olmsync.yaml": "repoURLs: [git@github.com:org/apps.git]\n",
				"argocd/apps.yaml": argoApp("good", "apps/good", "https://kubernetes.default.svc/", "good") + "---\n" +
					argoApp("missing", "apps/missing", "in-cluster", "m") + "---\n" + `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: chart
spec:
  destination: {name: in-cluster, namespace: c}
  source: {repoURL: https://charts.example.com, chart: thing, targetRevision: 1.0.0}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: elsewhere
spec:
  destination: {name: in-cluster, namespace: e}
  source: {repoURL: https://github.com/other/repo, path: apps/good}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: plugin
spec:
  destination: {name: in-cluster, namespace: p}
  source: {repoURL: https://github.com/org/apps.git, path: apps/good, plugin: {name: x}}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: set
spec: {}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: local-chart
spec:
  destination: {name: in-cluster, namespace: lc}
  source: {repoURL: https://github.com/org/apps, path: charts/thing}
`,
				"apps/good/ns.yaml":              nsYAML,
				"charts/thing/Chart.yaml":        "apiVersion: v2\nname: thing\nversion: 1.0.0\n",
				"charts/thing/values.yaml":       "a: b\n",
				"apps/unused/kustomization.yaml": kustomizationOf,
			},
			wantMethod: MethodArgoCD,
			wantApps: []appSummary{
				{"good", "apps/good", "good", "in-cluster", false, false, MethodArgoCD, "argocd/apps.yaml", 1, ClusterFromApplication},
				{"apps/unused", "apps/unused", "", "", false, false, MethodKustomization, "apps/unused/kustomization.yaml", 0, ClusterNone},
			},
			wantProblems: []problemSummary{
				{ReasonPathMissing, "argocd/apps.yaml", 16},
				{ReasonUnsupportedSource, "argocd/apps.yaml", 48},
				{ReasonInvalidApplication, "argocd/apps.yaml", 56},
				{ReasonHelmChart, "argocd/apps.yaml", 62},
			},
			wantForeign: []string{"Application chart", "Application elsewhere"},
		},
		{
			name: "multi-source application: one app per path source, values-only source ignored",
			repo: files{
				"argocd/multi.yaml": `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: multi
spec:
  destination: {name: cl1, namespace: team}
  sources:
  - repoURL: https://github.com/org/apps
    path: apps/a
  - repoURL: https://github.com/org/apps
    ref: values
  - repoURL: https://github.com/org/apps
    path: apps/b
`,
				"apps/a/ns.yaml": nsYAML,
				"apps/b/ns.yaml": nsYAML,
			},
			wantMethod: MethodArgoCD,
			wantApps: []appSummary{
				{"multi[0]", "apps/a", "team", "cl1", false, false, MethodArgoCD, "argocd/multi.yaml", 1, ClusterFromApplication},
				{"multi[2]", "apps/b", "team", "cl1", false, false, MethodArgoCD, "argocd/multi.yaml", 1, ClusterFromApplication},
			},
		},
		{
			name: "applications used as kustomize patches are not applications",
			repo: files{
				"argocd/base/kustomization.yaml": "resources:\n- app.yaml\n",
				"argocd/base/app.yaml":           argoApp("app", "apps/a", "in-cluster", "a"),
				"argocd/prod/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: patch.yaml\n",
				"argocd/prod/patch.yaml":         "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: app\nspec:\n  source:\n    path: apps/does-not-exist\n",
				"apps/a/ns.yaml":                 nsYAML,
			},
			wantMethod: MethodArgoCD,
			wantApps: []appSummary{
				{"app", "apps/a", "a", "in-cluster", false, false, MethodArgoCD, "argocd/base/app.yaml", 1, ClusterFromApplication},
				{"argocd/prod", "argocd/prod", "", "", false, false, MethodKustomization, "argocd/prod/kustomization.yaml", 0, ClusterNone},
			},
		},
		{
			name: "duplicate application in one cluster is reported and skipped",
			repo: files{
				"argocd/a.yaml":  argoApp("same", "apps/a", "cl1", "a"),
				"argocd/b.yaml":  argoApp("same", "apps/b", "cl1", "b"),
				"argocd/c.yaml":  argoApp("same", "apps/b", "cl2", "b"),
				"apps/a/ns.yaml": nsYAML,
				"apps/b/ns.yaml": nsYAML,
			},
			wantMethod: MethodArgoCD,
			wantApps: []appSummary{
				{"same", "apps/a", "a", "cl1", false, false, MethodArgoCD, "argocd/a.yaml", 1, ClusterFromApplication},
				{"same", "apps/b", "b", "cl2", false, false, MethodArgoCD, "argocd/c.yaml", 1, ClusterFromApplication},
			},
			wantProblems: []problemSummary{{ReasonDuplicateApp, "argocd/b.yaml", 1}},
		},
		{
			name: "kustomization roots: bases and components are not apps; clusters from path conventions the repository names",
			repo: files{
				// A cluster-scope app: the roots are what the repository deploys, though no
				// entry point says so. The conventions name a and cl1, which olmsync.yaml
				// names; b is named nowhere, so its cluster is unknown (issue 29).
				"olmsync.yaml":                                  "discovery:\n  clusters: [a, cl1]\n",
				"base/kustomization.yaml":                       kustomizationOf,
				"base/ns.yaml":                                  nsYAML,
				"components/extra/kustomization.yaml":           "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
				"overlays/a/kustomization.yaml":                 "resources:\n- ../../base\ncomponents:\n- ../../components/extra\n",
				"overlays/b/kustomization.yaml":                 "bases:\n- ../../base\n",
				"cluster-scope/overlays/cl1/kustomization.yaml": kustomizationOf,
				"cluster-scope/overlays/cl1/ns.yaml":            nsYAML,
				"plain/ns.yaml":                                 nsYAML,
			},
			wantMethod: MethodKustomization,
			wantApps: []appSummary{
				{"overlays/b", "overlays/b", "", "", false, false, MethodKustomization, "overlays/b/kustomization.yaml", 0, ClusterUnknown},
				{"overlays/a", "overlays/a", "", "a", false, false, MethodKustomization, "overlays/a/kustomization.yaml", 0, ClusterFromPath},
				{"cluster-scope/overlays/cl1", "cluster-scope/overlays/cl1", "", "cl1", true, false, MethodKustomization, "cluster-scope/overlays/cl1/kustomization.yaml", 0, ClusterFromPath},
			},
		},
		{
			name: "applications of other repositories only, no cluster-scope app: the kustomization roots are library roots",
			repo: files{
				"argocd/app.yaml":         argoApp("chart", "", "in-cluster", "x") + "    chart: thing\n",
				"site/kustomization.yaml": kustomizationOf,
				"site/ns.yaml":            nsYAML,
			},
			wantMethod: MethodKustomization,
			wantApps: []appSummary{
				{"site", "site", "", "", false, false, MethodKustomization, "site/kustomization.yaml", 0, ClusterNone},
			},
			wantForeign: []string{"Application chart"},
		},
		{
			name: "a broken kustomization is a root, reported",
			repo: files{
				"broken/kustomization.yaml": "resources:\n- a.yaml\nnamePrefix: [x\n",
			},
			wantMethod: MethodKustomization,
			wantApps: []appSummary{
				{"broken", "broken", "", "", false, false, MethodKustomization, "broken/kustomization.yaml", 0, ClusterNone},
			},
			wantProblems: []problemSummary{{ReasonUnreadable, "broken/kustomization.yaml", 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, root := memRepo(t, tt.repo)
			d, err := Discover(t.Context(), fsys, root, DiscoverOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Method != tt.wantMethod {
				t.Errorf("method = %s, want %s", d.Method, tt.wantMethod)
			}
			if diff := cmp.Diff(tt.wantApps, summarize(d.Apps)); diff != "" {
				t.Errorf("apps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantProblems, summarizeProblems(d.Problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", diff, d.Problems)
			}
			var foreign []string
			for _, f := range d.Foreign {
				foreign = append(foreign, f.Kind+" "+f.Name)
				if f.Reason == "" {
					t.Errorf("foreign %s %s: no reason", f.Kind, f.Name)
				}
			}
			if diff := cmp.Diff(tt.wantForeign, foreign); diff != "" {
				t.Errorf("foreign (-want +got):\n%s", diff)
			}
			for _, a := range d.Apps {
				if a.Found.Reason == "" || a.ClusterScopeReason == "" || a.ClusterReason == "" {
					t.Errorf("app %s: no reason recorded: %+v", a.Name, a)
				}
			}
		})
	}
}

func TestDiscoverReasonsSayWhy(t *testing.T) {
	fsys, root := memRepo(t, files{
		"argocd/app.yaml":                    argoApp("cs", "cluster-scope/overlays/cl1", "cl1", "") + "---\n" + argoApp("gone", "apps/gone", "cl1", "g"),
		"cluster-scope/overlays/cl1/ns.yaml": nsYAML,
	})
	d, err := Discover(t.Context(), fsys, root, DiscoverOptions{RepoURLs: []string{"git@github.com:org/apps.git"}, RepoURLsFrom: "the git remote origin"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Apps) != 1 {
		t.Fatalf("apps = %v", d.Apps)
	}
	for _, want := range []string{`"cs"`, `"cluster-scope/overlays/cl1"`, `"cl1"`} {
		if !strings.Contains(d.Apps[0].Found.Reason, want) {
			t.Errorf("reason %q does not mention %s", d.Apps[0].Found.Reason, want)
		}
	}
	if !strings.Contains(d.Apps[0].ClusterScopeReason, "cluster-scope") {
		t.Errorf("cluster-scope reason %q", d.Apps[0].ClusterScopeReason)
	}
	if len(d.Problems) != 1 || !strings.Contains(d.Problems[0].Message, `"apps/gone" does not exist`) {
		t.Errorf("problems = %v, want the missing path", d.Problems)
	}
}

func TestArgoKustomizeSettings(t *testing.T) {
	fsys, root := memRepo(t, files{
		"argocd/app.yaml": argoApp("team", "apps/team", "cl1", "team") + `    kustomize:
      namePrefix: p-
      namespace: override
      commonLabels: {a: b}
`,
		"apps/team/kustomization.yaml": kustomizationOf,
		"apps/team/ns.yaml":            nsYAML,
	})
	d, err := Discover(t.Context(), fsys, root, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Apps[0].overrides; got != (kustomizeOverrides{NamePrefix: "p-", Namespace: "override"}) {
		t.Errorf("overrides = %+v", got)
	}
	if len(d.Problems) != 1 || d.Problems[0].Reason != ReasonIgnoredSetting || !strings.Contains(d.Problems[0].Message, "kustomize.commonLabels") {
		t.Errorf("problems = %v, want kustomize.commonLabels reported as ignored", d.Problems)
	}
}

func TestNormalizeRepoURL(t *testing.T) {
	same := []string{
		"https://github.com/Org/Apps",
		"https://github.com/org/apps.git",
		"https://github.com/org/apps/",
		"git@github.com:org/apps.git",
		"ssh://git@github.com/org/apps",
		"https://user@github.com/org/apps",
	}
	for _, u := range same {
		if got := normalizeRepoURL(u); got != "github.com/org/apps" {
			t.Errorf("normalizeRepoURL(%q) = %q", u, got)
		}
	}
	if matchesRepoURL("https://github.com/org/other", same) {
		t.Error("another repository matched")
	}
}

func TestArgoCluster(t *testing.T) {
	tests := []struct{ name, server, want string }{
		{"cl1", "", "cl1"},
		{"", "https://kubernetes.default.svc", "in-cluster"},
		{"", "https://kubernetes.default.svc/", "in-cluster"},
		{"in-cluster", "", "in-cluster"},
		{"", "https://api.x:6443", "https://api.x:6443"},
		{"named", "https://api.x:6443", "named"},
	}
	for _, tt := range tests {
		if got := argoCluster(tt.name, tt.server); got != tt.want {
			t.Errorf("argoCluster(%q, %q) = %q, want %q", tt.name, tt.server, got, tt.want)
		}
	}
}

func TestClusterGrouping(t *testing.T) {
	apps := []*AppResult{
		{App: App{Name: "b", Cluster: "cl2"}},
		{App: App{Name: "z", Cluster: "cl1"}},
		{App: App{Name: "cs", Cluster: "cl1", ClusterScope: true}},
		{App: App{Name: "d"}},
		{App: App{Name: "a", Cluster: "cl1"}},
	}
	got := map[string][]string{}
	var order []string
	for _, c := range groupClusters(apps) {
		order = append(order, c.Name)
		for _, a := range c.Apps {
			got[c.Name] = append(got[c.Name], a.Name)
		}
	}
	if !slices.Equal(order, []string{"", "cl1", "cl2"}) {
		t.Errorf("cluster order = %q", order)
	}
	want := map[string][]string{"": {"d"}, "cl1": {"cs", "a", "z"}, "cl2": {"b"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("grouping (-want +got):\n%s", diff)
	}
}

// argoApp writes an Argo CD Application with one source.
func argoApp(name, path, cluster, namespace string) string {
	return rendertest.Application(name, path, cluster, namespace)
}

func TestDiscoverCoverage(t *testing.T) {
	ours := DiscoverOptions{RepoURLs: []string{"https://github.com/org/apps"}, RepoURLsFrom: "the git remote origin"}
	tests := []struct {
		name        string
		repo        files
		opts        DiscoverOptions
		wantMethod  Method
		wantApps    []appSummary
		wantForeign []string
		wantUnused  []string
	}{
		{
			name: "an Application of another repository is foreign; its would-be path is no problem; the roots are library roots",
			repo: files{
				"argocd/other.yaml":                      strings.Replace(argoApp("other", "deploy/prod", "in-cluster", "x"), "org/apps", "org/other", 1),
				"apps/a/overlays/cl1/kustomization.yaml": "resources:\n- ../../base\n",
				"apps/a/base/kustomization.yaml":         kustomizationOf,
			},
			opts:       ours,
			wantMethod: MethodKustomization,
			wantApps: []appSummary{
				{"apps/a/overlays/cl1", "apps/a/overlays/cl1", "", "", false, false, MethodKustomization, "apps/a/overlays/cl1/kustomization.yaml", 0, ClusterNone},
			},
			wantForeign: []string{"Application other"},
		},
		{
			name: "roots no Application covers are library roots; what an Application includes is not; a dead base is unused",
			repo: files{
				"argocd/a.yaml":                          argoApp("a", "apps/a/overlays/cl1", "cl1", "a"),
				"apps/a/overlays/cl1/kustomization.yaml": "resources:\n- ../../base\n",
				"apps/a/base/kustomization.yaml":         "resources:\n- ../../shared\n",
				"apps/shared/kustomization.yaml":         kustomizationOf,
				"apps/b/overlays/cl2/kustomization.yaml": kustomizationOf,
				"apps/c/base/kustomization.yaml":         kustomizationOf,
				"platform/kustomization.yaml":            kustomizationOf,
			},
			opts:       ours,
			wantMethod: MethodArgoCD,
			wantApps: []appSummary{
				{"a", "apps/a/overlays/cl1", "a", "cl1", false, false, MethodArgoCD, "argocd/a.yaml", 1, ClusterFromApplication},
				{"apps/b/overlays/cl2", "apps/b/overlays/cl2", "", "", false, false, MethodKustomization, "apps/b/overlays/cl2/kustomization.yaml", 0, ClusterNone},
				{"platform", "platform", "", "", false, false, MethodKustomization, "platform/kustomization.yaml", 0, ClusterNone},
			},
			wantUnused: []string{"apps/c/base"},
		},
		{
			name: "a recursive directory Application covers the kustomizations below it",
			repo: files{
				"argocd/all.yaml":                  argoApp("all", "manifests", "cl1", "x") + "    directory:\n      recurse: true\n",
				"manifests/ns.yaml":                nsYAML,
				"manifests/sub/kustomization.yaml": kustomizationOf,
			},
			opts:       ours,
			wantMethod: MethodArgoCD,
			wantApps: []appSummary{
				{"all", "manifests", "x", "cl1", false, true, MethodArgoCD, "argocd/all.yaml", 1, ClusterFromApplication},
			},
		},
		{
			name: "only bases: they are the (library) roots",
			repo: files{
				"base/kustomization.yaml": kustomizationOf,
			},
			wantMethod: MethodKustomization,
			wantApps: []appSummary{
				{"base", "base", "", "", false, false, MethodKustomization, "base/kustomization.yaml", 0, ClusterNone},
			},
		},
		{
			name: "no kustomization, no Application of ours: the repository is one directory app, a library root",
			repo: files{
				"operators/sub.yaml":        nsYAML,
				".github/workflows/ci.yaml": "on: push\n",
			},
			wantMethod: MethodDirectory,
			wantApps: []appSummary{
				{".", ".", "", "", false, true, MethodDirectory, ".", 0, ClusterNone},
			},
		},
		{
			name:       "nothing to deploy: no app",
			repo:       files{"README.md": "# hi\n", ".github/ci.yaml": "on: push\n"},
			wantMethod: MethodDirectory,
		},
		{
			name: "Application paths are relative to the repository's top: the checked folder's prefix is taken off",
			repo: files{
				"argocd/a.yaml":             argoApp("a", "gitops/apps/a", "cl1", "a") + "---\n" + argoApp("elsewhere", "services/x", "cl1", "x"),
				"apps/a/kustomization.yaml": kustomizationOf,
			},
			opts:       DiscoverOptions{RepoURLs: ours.RepoURLs, RepoURLsFrom: ours.RepoURLsFrom, RepoPath: "gitops"},
			wantMethod: MethodArgoCD,
			wantApps: []appSummary{
				{"a", "apps/a", "a", "cl1", false, false, MethodArgoCD, "argocd/a.yaml", 1, ClusterFromApplication},
			},
			wantForeign: []string{"Application elsewhere"},
		},
		{
			name: "an ApplicationSet of another repository is foreign; one of this repository is expanded through its roots",
			repo: files{
				"argocd/sets.yaml": `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: theirs
spec:
  template:
    spec:
      source: {repoURL: https://github.com/org/other, path: "{{path}}"}
`,
				"apps/x/overlays/cl9/kustomization.yaml": kustomizationOf,
			},
			opts:       ours,
			wantMethod: MethodKustomization,
			wantApps: []appSummary{
				{"apps/x/overlays/cl9", "apps/x/overlays/cl9", "", "", false, false, MethodKustomization, "apps/x/overlays/cl9/kustomization.yaml", 0, ClusterNone},
			},
			wantForeign: []string{"ApplicationSet theirs"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, root := memRepo(t, tt.repo)
			d, err := Discover(t.Context(), fsys, root, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if d.Method != tt.wantMethod {
				t.Errorf("method = %s, want %s", d.Method, tt.wantMethod)
			}
			if diff := cmp.Diff(tt.wantApps, summarize(d.Apps)); diff != "" {
				t.Errorf("apps (-want +got):\n%s", diff)
			}
			if len(d.Problems) > 0 {
				t.Errorf("problems = %v, want none", d.Problems)
			}
			var foreign, unused []string
			for _, f := range d.Foreign {
				foreign = append(foreign, f.Kind+" "+f.Name)
			}
			for _, u := range d.Unused {
				unused = append(unused, u.Path)
			}
			if diff := cmp.Diff(tt.wantForeign, foreign); diff != "" {
				t.Errorf("foreign (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantUnused, unused); diff != "" {
				t.Errorf("unused (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDirectoryAppSkipsWhatIsNotAManifest(t *testing.T) {
	fsys, root := memRepo(t, files{
		"operators/ns.yaml":         nsYAML,
		"operators/values.yaml":     "replicas: 3\n",
		".github/workflows/ci.yaml": "on: push\n",
	})
	res, err := Render(t.Context(), fsys, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Apps) != 1 || res.Apps[0].Err != nil || len(res.Apps[0].Objects) != 1 {
		t.Fatalf("apps = %+v, want one directory app with the Namespace", res.Apps)
	}
	var skipped []string
	for _, w := range res.Warnings {
		if w.Reason == ReasonNotManifest {
			skipped = append(skipped, w.File)
		}
	}
	if diff := cmp.Diff([]string{"operators/values.yaml"}, skipped); diff != "" {
		t.Errorf("skipped files (-want +got):\n%s", diff)
	}
}

// TestDiscoverBrokenKustomizationStillUsesItsBases: a kustomization kustomize refuses (a
// kustomize v4 patches list) still includes its base: the base is neither a root nor an
// unused base, and the broken overlay is the app that reports the failure.
func TestDiscoverBrokenKustomizationStillUsesItsBases(t *testing.T) {
	fsys, root := memRepo(t, files{
		"team-a/overlays/cl1/kustomization.yaml": "resources:\n- ../../base\npatches:\n- p.yaml\n",
		"team-a/base/kustomization.yaml":         kustomizationOf,
		"team-a/base/ns.yaml":                    nsYAML,
	})
	// A Sync deploys the roots, and names its cluster cl1.
	d, err := Discover(t.Context(), fsys, root, DiscoverOptions{RootsAreApps: true, KnownClusters: []string{"cl1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []appSummary{{"team-a/overlays/cl1", "team-a/overlays/cl1", "", "cl1", false, false, MethodKustomization, "team-a/overlays/cl1/kustomization.yaml", 0, ClusterFromPath}}
	if diff := cmp.Diff(want, summarize(d.Apps)); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	if len(d.Unused) != 0 {
		t.Errorf("unused: %+v", d.Unused)
	}
}

// TestDiscoverRepositoryFolderNamedByConfig: when olmsync.yaml names the repository, the
// checked folder is the repository its Applications see: a path that is in neither place
// is missing (a problem), not outside.
func TestDiscoverRepositoryFolderNamedByConfig(t *testing.T) {
	fsys, root := memRepo(t, files{
		"olmsync.yaml":              "repoURLs: [https://github.com/org/apps]\n",
		"argocd/a.yaml":             argoApp("a", "apps/a", "cl1", "a") + "---\n" + argoApp("gone", "apps/gone", "cl1", "g"),
		"apps/a/kustomization.yaml": kustomizationOf,
	})
	d, err := Discover(t.Context(), fsys, root, DiscoverOptions{RepoPath: "examples/gitops"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Apps) != 1 || d.Apps[0].Path != "apps/a" || len(d.Foreign) != 0 {
		t.Errorf("apps %+v, foreign %+v", summarize(d.Apps), d.Foreign)
	}
	if diff := cmp.Diff([]problemSummary{{ReasonPathMissing, "argocd/a.yaml", 16}}, summarizeProblems(d.Problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
