package render

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// render renders a repository with the given options, failing the test on a fatal error.
func renderRepo(t testing.TB, fsys filesys.FileSystem, root string, opts Options) *Result {
	t.Helper()
	res, err := Render(context.Background(), fsys, root, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return res
}

func appNamed(t testing.TB, res *Result, name string) *AppResult {
	t.Helper()
	for _, a := range res.Apps {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no app %q among %v", name, appNames(res))
	return nil
}

func appNames(res *Result) []string {
	var out []string
	for _, a := range res.Apps {
		out = append(out, a.Name)
	}
	return out
}

// provenance is what the provenance test compares for one object.
type provenance struct {
	Kind, Name  string
	File        string
	Line        int
	GeneratedBy string
}

// The provenance repository: a base with a multi-document file (a header comment, a
// comment inside a document, two Subscriptions whose names contain one another), a JSON
// file, generators with names that contain one another; an overlay with a name prefix and
// suffix, a namespace, a patch and a List.
var provenanceRepo = files{
	"base/kustomization.yaml": `
resources:
- multi.yaml
- catalog.json
configMapGenerator:
- name: settings
  literals: [a=b]
- name: set
  literals: [c=d]
secretGenerator:
- name: creds
  literals: [user=x]
`,
	"base/multi.yaml": `
# A header comment, as real repositories have
---
apiVersion: v1
kind: Namespace
metadata:
  name: team
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: og
spec:
  targetNamespaces: [team]
---
# a comment inside the document
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: sub-ab
spec:
  channel: stable
  name: ab
  source: community-operators
  sourceNamespace: openshift-marketplace
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: sub-a
spec:
  channel: stable
  name: a
  source: community-operators
  sourceNamespace: openshift-marketplace
`,
	"base/catalog.json": `
{
  "apiVersion": "operators.coreos.com/v1alpha1",
  "kind": "CatalogSource",
  "metadata": {"name": "cat", "namespace": "openshift-marketplace"},
  "spec": {"sourceType": "grpc", "image": "quay.io/x/y:1"}
}
`,
	"overlay/kustomization.yaml": `
namePrefix: p-
nameSuffix: -s
namespace: team
resources:
- ../base
- extra.yaml
patches:
- path: patch.yaml
`,
	"overlay/patch.yaml": `
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: sub-a
spec:
  channel: fast
`,
	"overlay/extra.yaml": `
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: one
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: two
`,
}

func TestProvenance(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("disk=%t", disk), func(t *testing.T) {
			mk := memRepo
			if disk {
				mk = diskRepo
			}
			fsys, root := mk(t, provenanceRepo)
			res := renderRepo(t, fsys, root, Options{})
			app := appNamed(t, res, "overlay")
			if app.Err != nil {
				t.Fatal(app.Err)
			}
			var got []provenance
			for _, o := range app.Objects {
				got = append(got, provenance{o.Kind(), o.Name(), o.Source.File, o.Source.Line, o.Source.GeneratedBy})
			}
			slices.SortFunc(got, func(a, b provenance) int { return strings.Compare(a.Kind+a.Name, b.Kind+b.Name) })
			want := []provenance{
				{"CatalogSource", "p-cat-s", "base/catalog.json", 1, ""},
				{"ConfigMap", "p-one-s", "overlay/extra.yaml", 4, ""},
				{"ConfigMap", "p-set-s-" + hashOf(t, app, "p-set-s-"), "base/kustomization.yaml", 7, "ConfigMapGenerator"},
				{"ConfigMap", "p-settings-s-" + hashOf(t, app, "p-settings-s-"), "base/kustomization.yaml", 5, "ConfigMapGenerator"},
				{"ConfigMap", "p-two-s", "overlay/extra.yaml", 8, ""},
				{"Namespace", "team", "base/multi.yaml", 3, ""},
				{"OperatorGroup", "p-og-s", "base/multi.yaml", 8, ""},
				{"Secret", "p-creds-s-" + hashOf(t, app, "p-creds-s-"), "base/kustomization.yaml", 10, "SecretGenerator"},
				{"Subscription", "p-sub-a-s", "base/multi.yaml", 26, ""},
				{"Subscription", "p-sub-ab-s", "base/multi.yaml", 16, ""},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("provenance (-want +got):\n%s", diff)
			}
			for _, o := range app.Objects {
				if _, has := o.Manifest.GetAnnotations()["config.kubernetes.io/origin"]; has {
					t.Errorf("%s %s keeps the origin annotation olmsync added", o.Kind(), o.Name())
				}
				if _, has := o.Manifest.Object["metadata"].(map[string]any)[sourceMarker]; has {
					t.Errorf("%s %s keeps the source marker olmsync added", o.Kind(), o.Name())
				}
				if _, has := o.Manifest.Object["metadata"].(map[string]any)["annotations"]; has && o.Kind() != "CatalogSource" {
					t.Errorf("%s %s has metadata.annotations %v; the source had none", o.Kind(), o.Name(), o.Manifest.GetAnnotations())
				}
				if o.Kind() == "Subscription" && o.Manifest.GetAnnotations() != nil {
					t.Errorf("%s %s has annotations %v; the source had none", o.Kind(), o.Name(), o.Manifest.GetAnnotations())
				}
			}
			sub := objectNamed(t, app, "Subscription", "p-sub-a-s")
			if ch := nested(sub, "spec", "channel"); ch != "fast" {
				t.Errorf("patched channel = %q, want fast", ch)
			}
		})
	}
}

// hashOf finds the hash kustomize appended to a generated name.
func hashOf(t *testing.T, app *AppResult, prefix string) string {
	t.Helper()
	for _, o := range app.Objects {
		if rest, ok := strings.CutPrefix(o.Name(), prefix); ok && !strings.Contains(rest, "-") {
			return rest
		}
	}
	t.Fatalf("no object named %s<hash>", prefix)
	return ""
}

func objectNamed(t testing.TB, app *AppResult, kind, name string) *Object {
	t.Helper()
	for _, o := range app.Objects {
		if o.Kind() == kind && o.Name() == name {
			return o
		}
	}
	t.Fatalf("app %s has no %s %s", app.Name, kind, name)
	return nil
}

func nested(o *Object, fields ...string) string {
	v, _, _ := unstructuredString(o.Manifest.Object, fields...)
	return v
}

func TestUserOriginAnnotationsKept(t *testing.T) {
	fsys, root := memRepo(t, files{
		"app/kustomization.yaml": "buildMetadata: [originAnnotations]\nresources:\n- ns.yaml\n",
		"app/ns.yaml":            nsYAML,
	})
	app := appNamed(t, renderRepo(t, fsys, root, Options{}), "app")
	if app.Err != nil {
		t.Fatal(app.Err)
	}
	o := app.Objects[0]
	if _, has := o.Manifest.GetAnnotations()["config.kubernetes.io/origin"]; !has {
		t.Error("the app asked for origin annotations; they were removed")
	}
	if o.Source.File != "app/ns.yaml" || o.Source.Line != 1 {
		t.Errorf("source = %+v", o.Source)
	}
}

func TestPlainFolderAndEffectiveNamespace(t *testing.T) {
	fsys, root := memRepo(t, files{
		"olmsync.yaml": `
apps:
- {name: team, path: apps/team, namespace: team}
- {name: deep, path: apps/deep, namespace: deep, recurse: true}
- {name: shallow, path: apps/deep, namespace: deep}
`,
		"apps/team/a.yaml": `
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: sub
spec: {name: p, source: s, sourceNamespace: m}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other-ns
  namespace: elsewhere
`,
		"apps/team/b.json":    `{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "role"}}`,
		"apps/team/notes.txt": "not a manifest",
		"apps/deep/top.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top\n",
		"apps/deep/sub/x.yml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: below\n",
	})
	res := renderRepo(t, fsys, root, Options{})
	type row struct {
		Name, Manifest, Effective string
		Scope                     Scope
		File                      string
		Line                      int
	}
	var got []row
	for _, o := range appNamed(t, res, "team").Objects {
		got = append(got, row{o.Name(), o.Namespace(), o.EffectiveNamespace, o.Scope, o.Source.File, o.Source.Line})
	}
	want := []row{
		{"sub", "", "team", ScopeNamespaced, "apps/team/a.yaml", 1},
		{"other-ns", "elsewhere", "elsewhere", ScopeNamespaced, "apps/team/a.yaml", 7},
		{"role", "", "", ScopeCluster, "apps/team/b.json", 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	count := func(name string) int { return len(appNamed(t, res, name).Objects) }
	if count("deep") != 2 || count("shallow") != 1 {
		t.Errorf("recurse: deep has %d objects (want 2), shallow %d (want 1)", count("deep"), count("shallow"))
	}
}

func TestScopeFromRenderedCRD(t *testing.T) {
	fsys, root := memRepo(t, files{
		"olmsync.yaml": `
apps:
- {name: cs, path: cluster-scope, cluster: cl1}
- {name: team, path: team, namespace: team, cluster: cl1}
- {name: other, path: team, namespace: team, cluster: cl2}
`,
		"cluster-scope/crd.yaml": `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Cluster
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
		"team/w.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: example.org/v1\nkind: Gadget\nmetadata:\n  name: g\n",
	})
	res := renderRepo(t, fsys, root, Options{})
	scopes := map[string]Scope{}
	for _, c := range res.Clusters {
		for _, o := range c.Objects() {
			scopes[c.Name+"/"+o.Kind()] = o.Scope
		}
	}
	want := map[string]Scope{
		"cl1/CustomResourceDefinition": ScopeCluster,
		"cl1/Widget":                   ScopeCluster, // the cluster's CRD says so
		"cl1/Gadget":                   ScopeUnknown, // nobody knows
		"cl2/Widget":                   ScopeUnknown, // another cluster's CRD does not count
		"cl2/Gadget":                   ScopeUnknown,
	}
	if diff := cmp.Diff(want, scopes); diff != "" {
		t.Errorf("scopes (-want +got):\n%s", diff)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name     string
		repo     files
		opts     Options
		wantErr  error
		wantFile string
		wantLine int
		wantMsg  string
	}{
		{
			name: "malformed YAML in a resource",
			repo: files{
				"app/kustomization.yaml": "resources:\n- good.yaml\n- bad.yaml\n",
				"app/good.yaml":          nsYAML,
				"app/bad.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: b\n",
			},
			wantErr: ErrMalformedYAML, wantFile: "app/bad.yaml", wantLine: 5, wantMsg: "did not find expected ',' or '}'",
		},
		{
			name: "duplicate key in a resource",
			repo: files{
				"app/kustomization.yaml": "resources:\n- dup.yaml\n",
				"app/dup.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n  a: c\n",
			},
			wantErr: ErrMalformedYAML, wantFile: "app/dup.yaml", wantLine: 7, wantMsg: `mapping key "a" already defined at line 6`,
		},
		{
			name: "broken kustomization: unknown field",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\nnamePrefx: x-\n",
				"app/ns.yaml":            nsYAML,
			},
			wantErr: ErrMalformedYAML, wantFile: "app/kustomization.yaml", wantLine: 3, wantMsg: `unknown field "namePrefx"`,
		},
		{
			name: "broken kustomization: malformed YAML",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\n  - other.yaml\nnamespace: [\n",
			},
			wantErr: ErrMalformedYAML, wantFile: "app/kustomization.yaml", wantLine: 4, wantMsg: "did not find expected",
		},
		{
			name: "missing base",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\n- ../base-that-is-not-there\n",
				"app/ns.yaml":            nsYAML,
			},
			wantErr: ErrNotFound, wantFile: "app/kustomization.yaml", wantLine: 3, wantMsg: `"../base-that-is-not-there"`,
		},
		{
			name: "base folder without a kustomization",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ../plain\n",
				"plain/ns.yaml":          nsYAML,
			},
			wantErr: ErrNotFound, wantFile: "app/kustomization.yaml", wantLine: 2, wantMsg: "has no kustomization",
		},
		{
			name: "missing file in a base of a base",
			repo: files{
				"app/kustomization.yaml":  "resources:\n- ../mid\n",
				"mid/kustomization.yaml":  "resources:\n- ../base\n",
				"base/kustomization.yaml": "resources:\n- ns.yaml\n- gone.yaml\n",
				"base/ns.yaml":            nsYAML,
			},
			wantErr: ErrNotFound, wantFile: "base/kustomization.yaml", wantLine: 3, wantMsg: `"gone.yaml"`,
		},
		{
			name: "base out of the repository",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ../../../etc\n",
			},
			wantErr: ErrOutsideRepository, wantFile: "app/kustomization.yaml", wantLine: 2,
		},
		{
			name: "remote git base",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\n- github.com/org/repo//base?ref=v1\n",
				"app/ns.yaml":            nsYAML,
			},
			wantErr: ErrRemoteDisabled, wantFile: "app/kustomization.yaml", wantLine: 3, wantMsg: "github.com/org/repo//base?ref=v1",
		},
		{
			name: "remote ssh base in bases",
			repo: files{
				"app/kustomization.yaml": "bases:\n- git@github.com:org/repo.git/base\n",
			},
			wantErr: ErrRemoteDisabled, wantFile: "app/kustomization.yaml", wantLine: 2,
		},
		{
			name: "remote component",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\ncomponents:\n- https://github.com/org/repo/comp\n",
				"app/ns.yaml":            nsYAML,
			},
			wantErr: ErrRemoteDisabled, wantFile: "app/kustomization.yaml", wantLine: 4,
		},
		{
			name: "remote patch file",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\npatches:\n- path: https://example.com/patch.yaml\n",
				"app/ns.yaml":            nsYAML,
			},
			wantErr: ErrRemoteDisabled, wantFile: "app/kustomization.yaml", wantLine: 4,
		},
		{
			name: "helm chart",
			repo: files{
				"app/kustomization.yaml": "helmCharts:\n- name: thing\n  repo: https://charts.example.com\n  version: 1.0.0\n",
			},
			wantErr: ErrHelmDisabled, wantFile: "app/kustomization.yaml", wantLine: 2,
		},
		{
			name: "helm chart generator config",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\ngenerators:\n- chart.yaml\n",
				"app/ns.yaml":            nsYAML,
				"app/chart.yaml":         "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: thing\nname: thing\nrepo: https://charts.example.com\n",
			},
			wantErr: ErrHelmDisabled, wantFile: "app/kustomization.yaml", wantLine: 4, wantMsg: "needs Helm",
		},
		{
			name: "exec transformer",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\ntransformers:\n- fn.yaml\n",
				"app/ns.yaml":            nsYAML,
				"app/fn.yaml":            execFunction("Fix", "fix", "./fix.sh"),
			},
			wantErr: ErrPluginDisabled, wantFile: "app/kustomization.yaml", wantLine: 4, wantMsg: `transformer Fix "fix"`,
		},
		{
			name: "container validator while exec plugins are on",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\nvalidators:\n- fn.yaml\n",
				"app/ns.yaml":            nsYAML,
				"app/fn.yaml":            "apiVersion: example.com/v1\nkind: Check\nmetadata:\n  name: check\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example.com/check:1\n",
			},
			opts:    Options{EnableExecPlugins: true},
			wantErr: ErrPluginDisabled, wantFile: "app/kustomization.yaml", wantLine: 4, wantMsg: "a container plugin",
		},
		{
			name: "kustomize's own failure",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\npatches:\n- path: patch.yaml\n",
				"app/ns.yaml":            nsYAML,
				"app/patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-there\ndata: {a: b}\n",
			},
			wantErr: ErrKustomize, wantFile: "app/kustomization.yaml", wantMsg: "not-there",
		},
		{
			name: "load restrictions stay root-only",
			repo: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\npatches:\n- path: ../shared/patch.yaml\n",
				"app/ns.yaml":            nsYAML,
				"shared/patch.yaml":      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n  labels: {a: b}\n",
			},
			wantErr: ErrKustomize, wantFile: "app/kustomization.yaml", wantMsg: "is not in or below",
		},
		{
			name: "two kustomization files in one folder",
			repo: files{
				"app/kustomization.yaml": "resources: []\n",
				"app/kustomization.yml":  "resources: []\n",
			},
			wantErr: ErrMalformedYAML, wantFile: "app/kustomization.yaml", wantMsg: "more than one kustomization file",
		},
		{
			name: "plain folder with a document that is not an object",
			repo: files{
				"olmsync.yaml":   "apps:\n- {name: app, path: app}\n- {name: ok, path: ok}\n",
				"app/ns.yaml":    nsYAML,
				"app/other.yaml": "---\nfoo: bar\n",
			},
			wantErr: ErrInvalidManifest, wantFile: "app/other.yaml", wantLine: 2,
		},
		{
			name: "config app whose path does not exist",
			repo: files{
				"olmsync.yaml": "apps:\n- {name: ok, path: ok}\n- {name: app, path: nowhere}\n",
				"ok/ns.yaml":   nsYAML,
			},
			wantErr: ErrNotFound, wantFile: "olmsync.yaml", wantLine: 3, wantMsg: `"nowhere"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := files{"ok/kustomization.yaml": kustomizationOf, "ok/ns.yaml": nsYAML}
			for k, v := range tt.repo {
				repo[k] = v
			}
			fsys, root := memRepo(t, repo)
			res := renderRepo(t, fsys, root, tt.opts)
			app := appNamed(t, res, "app")
			var be *BuildError
			if !errors.As(app.Err, &be) {
				t.Fatalf("app error = %v (%T), want a *BuildError", app.Err, app.Err)
			}
			if !errors.Is(app.Err, tt.wantErr) {
				t.Errorf("error %v is not %v", app.Err, tt.wantErr)
			}
			if be.App != "app" || be.File != tt.wantFile || be.Line != tt.wantLine {
				t.Errorf("error at app %q %s:%d, want app %q %s:%d: %v", be.App, be.File, be.Line, "app", tt.wantFile, tt.wantLine, app.Err)
			}
			msg := app.Err.Error()
			if !strings.Contains(msg, tt.wantMsg) || !strings.Contains(msg, `render app "app"`) || !strings.Contains(msg, tt.wantFile) {
				t.Errorf("message %q: want the app, %s and %q", msg, tt.wantFile, tt.wantMsg)
			}
			if strings.Contains(msg, root+"/") {
				t.Errorf("message %q holds the absolute repository path", msg)
			}
			if app.Objects != nil {
				t.Errorf("a failed app has objects: %v", app.Objects)
			}
			if ok := appNamed(t, res, "ok"); ok.Err != nil || len(ok.Objects) != 1 {
				t.Errorf("the other app did not render: %v, %d objects", ok.Err, len(ok.Objects))
			}
		})
	}
}

// execFunction is an exec KRM function config.
func execFunction(kind, name, path string) string {
	return "apiVersion: example.com/v1\nkind: " + kind + "\nmetadata:\n  name: " + name +
		"\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + path + "\n"
}

func TestFailedAppsDoNotStopOthers(t *testing.T) {
	repo := files{}
	for i := range 12 {
		dir := fmt.Sprintf("app%02d", i)
		repo[dir+"/kustomization.yaml"] = kustomizationOf
		repo[dir+"/ns.yaml"] = nsYAML
		if i%3 == 0 {
			repo[dir+"/kustomization.yaml"] = "resources:\n- ns.yaml\n- missing.yaml\n"
		}
	}
	fsys, root := memRepo(t, repo)
	res := renderRepo(t, fsys, root, Options{Parallelism: 3})
	if len(res.Apps) != 12 {
		t.Fatalf("apps = %v", appNames(res))
	}
	for i, a := range res.Apps {
		failed := i%3 == 0
		if (a.Err != nil) != failed || (len(a.Objects) == 1) == failed {
			t.Errorf("app %s: err %v, %d objects; want failed=%t", a.Name, a.Err, len(a.Objects), failed)
		}
	}
	if len(res.Failed()) != 4 {
		t.Errorf("Failed() = %d apps, want 4", len(res.Failed()))
	}
	if res.Clusters[0].Complete() {
		t.Error("a cluster with failed apps reports itself complete")
	}
}

func TestArgoOverridesApplied(t *testing.T) {
	fsys, root := memRepo(t, files{
		"argocd/app.yaml":              argoApp("team", "apps/team", "cl1", "team") + "    kustomize:\n      namePrefix: argo-\n      namespace: from-argo\n",
		"apps/team/kustomization.yaml": "resources:\n- sub.yaml\n",
		"apps/team/sub.yaml":           "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: sub\nspec: {name: p, source: s, sourceNamespace: m}\n",
	})
	app := appNamed(t, renderRepo(t, fsys, root, Options{}), "team")
	if app.Err != nil {
		t.Fatal(app.Err)
	}
	o := app.Objects[0]
	if o.Name() != "argo-sub" || o.Namespace() != "from-argo" || o.Source.File != "apps/team/sub.yaml" || o.Source.Line != 1 {
		t.Errorf("object %s/%s from %+v, want from-argo/argo-sub from apps/team/sub.yaml:1", o.Namespace(), o.Name(), o.Source)
	}
	data, err := fsys.ReadFile(root + "/apps/team/kustomization.yaml")
	if err != nil || string(data) != "resources:\n- sub.yaml\n" {
		t.Errorf("the user's kustomization changed: %q, %v", data, err)
	}
}

// TestAccept: Accept sees olmsync.yaml as read, before any app is built; its error ends the
// render as it is, and nil lets the render go on.
func TestAccept(t *testing.T) {
	fsys, root := memRepo(t, files{
		"olmsync.yaml":         "catalogs:\n- name: community\n  source: catalog\n",
		"a/kustomization.yaml": kustomizationOf, "a/ns.yaml": nsYAML,
	})
	stop := errors.New("stop here")
	var seen []string
	_, err := Render(context.Background(), fsys, root, Options{Accept: func(cfg *Config) error {
		for _, c := range cfg.Catalogs {
			seen = append(seen, c.Name+"="+c.Source)
		}
		return stop
	}})
	if !errors.Is(err, stop) || !slices.Equal(seen, []string{"community=catalog"}) {
		t.Errorf("Accept refusing: err = %v, catalogs seen %v", err, seen)
	}
	res := renderRepo(t, fsys, root, Options{Accept: func(*Config) error { return nil }})
	if len(res.Apps) != 1 || len(res.Apps[0].Objects) != 1 {
		t.Errorf("Accept accepting: %d apps, want 1 with its Namespace", len(res.Apps))
	}
}

func TestRenderRootErrors(t *testing.T) {
	fsys, root := memRepo(t, files{"olmsync.yaml": "apps: [\n"})
	_, err := Render(context.Background(), fsys, root, Options{})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.File != "olmsync.yaml" {
		t.Errorf("broken olmsync.yaml: err = %v, want a *ConfigError", err)
	}
	if _, err := Render(context.Background(), fsys, "/no/such/root", Options{}); err == nil {
		t.Error("a missing root rendered")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fsys, root = memRepo(t, files{"a/kustomization.yaml": kustomizationOf, "a/ns.yaml": nsYAML})
	if _, err := Render(ctx, fsys, root, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled render: err = %v", err)
	}
}
