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
}

func summarize(apps []App) []appSummary {
	var out []appSummary
	for _, a := range apps {
		out = append(out, appSummary{a.Name, a.Path, a.Namespace, a.Cluster, a.ClusterScope, a.Recurse, a.Found.Method, a.Found.File, a.Found.Line})
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
				{"forced-on", "platform", "", "", true, true, MethodConfig, "olmsync.yaml", 13},
				{"cs", "cluster-scope/overlays/prod/emea/cl1", "", "cl1", true, false, MethodConfig, "olmsync.yaml", 2},
				{"team", "apps/team", "team", "cl1", false, false, MethodConfig, "olmsync.yaml", 9},
				{"forced-off", "cluster-scope/overlays/prod/emea/cl2", "", "cl2", false, false, MethodConfig, "olmsync.yaml", 5},
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
				{"cluster-scope-cl1", "cluster-scope/overlays/prod/emea/cl1", "", "cl1", true, false, MethodArgoCD, "argocd/apps/cl1.yaml", 1},
				{"team", "apps/team/overlays/cl2", "team", "https://api.cl2.example.com:6443", false, true, MethodArgoCD, "argocd/apps/team.yaml", 1},
				{"root", "argocd/apps", "argocd", "in-cluster", false, false, MethodArgoCD, "argocd/root.yaml", 1},
			},
		},
		{
			name: "missing path, helm chart, other repository, plugin, ApplicationSet are problems",
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
				{"good", "apps/good", "good", "in-cluster", false, false, MethodArgoCD, "argocd/apps.yaml", 1},
			},
			wantProblems: []problemSummary{
				{ReasonPathMissing, "argocd/apps.yaml", 16},
				{ReasonHelmChart, "argocd/apps.yaml", 32},
				{ReasonOtherRepository, "argocd/apps.yaml", 40},
				{ReasonUnsupportedSource, "argocd/apps.yaml", 48},
				{ReasonUnsupportedSource, "argocd/apps.yaml", 56},
				{ReasonHelmChart, "argocd/apps.yaml", 62},
			},
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
				{"multi[0]", "apps/a", "team", "cl1", false, false, MethodArgoCD, "argocd/multi.yaml", 1},
				{"multi[2]", "apps/b", "team", "cl1", false, false, MethodArgoCD, "argocd/multi.yaml", 1},
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
				{"app", "apps/a", "a", "in-cluster", false, false, MethodArgoCD, "argocd/base/app.yaml", 1},
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
				{"same", "apps/a", "a", "cl1", false, false, MethodArgoCD, "argocd/a.yaml", 1},
				{"same", "apps/b", "b", "cl2", false, false, MethodArgoCD, "argocd/c.yaml", 1},
			},
			wantProblems: []problemSummary{{ReasonDuplicateApp, "argocd/b.yaml", 1}},
		},
		{
			name: "kustomization roots: bases and components are not apps",
			repo: files{
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
				{"cluster-scope/overlays/cl1", "cluster-scope/overlays/cl1", "", "", true, false, MethodKustomization, "cluster-scope/overlays/cl1/kustomization.yaml", 0},
				{"overlays/a", "overlays/a", "", "", false, false, MethodKustomization, "overlays/a/kustomization.yaml", 0},
				{"overlays/b", "overlays/b", "", "", false, false, MethodKustomization, "overlays/b/kustomization.yaml", 0},
			},
		},
		{
			name: "applications of other repositories only: fall back to kustomization roots",
			repo: files{
				"argocd/app.yaml":         argoApp("chart", "", "in-cluster", "x") + "    chart: thing\n",
				"site/kustomization.yaml": kustomizationOf,
				"site/ns.yaml":            nsYAML,
			},
			wantMethod: MethodKustomization,
			wantApps: []appSummary{
				{"site", "site", "", "", false, false, MethodKustomization, "site/kustomization.yaml", 0},
			},
			wantProblems: []problemSummary{{ReasonFallback, ".", 0}, {ReasonHelmChart, "argocd/app.yaml", 1}},
		},
		{
			name: "a broken kustomization is a root, reported",
			repo: files{
				"broken/kustomization.yaml": "resources:\n- a.yaml\nnamePrefix: [x\n",
			},
			wantMethod: MethodKustomization,
			wantApps: []appSummary{
				{"broken", "broken", "", "", false, false, MethodKustomization, "broken/kustomization.yaml", 0},
			},
			wantProblems: []problemSummary{{ReasonUnreadable, "broken/kustomization.yaml", 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, root := memRepo(t, tt.repo)
			d, err := Discover(fsys, root)
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
			for _, a := range d.Apps {
				if a.Found.Reason == "" || a.ClusterScopeReason == "" {
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
	d, err := Discover(fsys, root)
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
	d, err := Discover(fsys, root)
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
