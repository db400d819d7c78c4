package render

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/memguard/memtest"
	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
)

// TestHostileYAMLIsRefusedBeforeKustomize: a file whose aliases expand without bound, or
// whose anchor contains itself, fails its app with ErrInputLimit naming the file and
// line, wherever the app's build would read it — a resource of a kustomization, a plain
// folder's manifest, a patch file, an inline patch — and never reaches kustomize (whose
// kyaml expands anchors without a bound) or olmsync's own alias-following encoder. The
// test runs under a memory ceiling, so that a regression fails instead of exhausting the
// machine.
func TestHostileYAMLIsRefusedBeforeKustomize(t *testing.T) {
	memtest.Ceiling(t, 1<<30)
	const plainApp = "apps:\n- name: app\n  path: app\n"
	cyclic := yamltest.SelfAnchor
	tests := []struct {
		name     string
		files    files
		file     string
		line     int
		contains string
	}{
		{
			name: "resource of a kustomization",
			files: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\n- cm.yaml\n",
				"app/ns.yaml":            nsYAML,
				"app/cm.yaml":            yamltest.Laughs(9),
			},
			file: "app/cm.yaml", line: 9, contains: "document contains excessive aliasing",
		},
		{
			name:  "manifest of a plain folder",
			files: files{"olmsync.yaml": plainApp, "app/cm.yaml": yamltest.Laughs(9), "app/ns.yaml": nsYAML},
			file:  "app/cm.yaml", line: 9, contains: "excessive aliasing",
		},
		{
			name:  "anchor containing itself, plain folder",
			files: files{"olmsync.yaml": plainApp, "app/cm.yaml": cyclic},
			file:  "app/cm.yaml", line: 5, contains: "anchor 'd' value contains itself",
		},
		{
			name: "anchor containing itself, kustomize resource",
			files: files{
				"app/kustomization.yaml": "resources:\n- cm.yaml\n",
				"app/cm.yaml":            cyclic,
			},
			file: "app/cm.yaml", line: 5, contains: "contains itself",
		},
		{
			name: "patch file",
			files: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\npatches:\n- path: patch.yaml\n",
				"app/ns.yaml":            nsYAML,
				"app/patch.yaml":         yamltest.Laughs(9),
			},
			file: "app/patch.yaml", line: 9, contains: "excessive aliasing",
		},
		{
			name: "inline patch",
			files: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\npatches:\n- patch: |\n" + yamltest.Indent(yamltest.Laughs(9), "    "),
				"app/ns.yaml":            nsYAML,
			},
			file: "app/kustomization.yaml", line: 4, contains: "inline patches entry: document contains excessive aliasing",
		},
		{
			name: "strategic merge patch of a base",
			files: files{
				"app/kustomization.yaml":  "resources:\n- ../base\n",
				"base/kustomization.yaml": "resources:\n- ns.yaml\npatchesStrategicMerge:\n- p.yaml\n",
				"base/ns.yaml":            nsYAML,
				"base/p.yaml":             yamltest.Laughs(9),
			},
			file: "base/p.yaml", line: 9, contains: "excessive aliasing",
		},
		{
			name: "inline generator config",
			files: files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\ngenerators:\n- |\n" + yamltest.Indent(yamltest.Laughs(9), "  "),
				"app/ns.yaml":            nsYAML,
			},
			file: "app/kustomization.yaml", line: 4, contains: "inline generators entry: document contains excessive aliasing",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, root := memRepo(t, tt.files)
			res := renderRepo(t, fsys, root, Options{})
			app := appNamed(t, res, "app")
			var be *BuildError
			if !errors.As(app.Err, &be) || !errors.Is(app.Err, ErrInputLimit) {
				t.Fatalf("app error = %v, want a BuildError wrapping ErrInputLimit", app.Err)
			}
			if be.File != tt.file || be.Line != tt.line || !strings.Contains(be.Error(), tt.contains) {
				t.Errorf("error %q, want it at %s:%d saying %q", be, tt.file, tt.line, tt.contains)
			}
			if errors.Is(app.Err, ErrMalformedYAML) || errors.Is(app.Err, ErrKustomize) {
				t.Errorf("error %v is reported as malformed YAML or as kustomize's", app.Err)
			}
		})
	}
}

// TestHostileApplicationIsAProblem: an Argo CD Application file that is a bomb is a
// discovery problem naming file and line; the other Applications still count.
func TestHostileApplicationIsAProblem(t *testing.T) {
	memtest.Ceiling(t, 1<<30)
	bomb := strings.Replace(yamltest.Laughs(9), "apiVersion: v1\nkind: ConfigMap", "apiVersion: argoproj.io/v1alpha1\nkind: Application", 1)
	fsys, root := memRepo(t, files{
		"argo/bomb.yaml": bomb,
		"argo/good.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: good\nspec:\n  source:\n    path: app\n  destination:\n    namespace: ns\n",
		"app/ns.yaml":    nsYAML,
	})
	d, err := Discover(context.Background(), fsys, root, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, p := range d.Problems {
		if p.File == "argo/bomb.yaml" && p.Line == 9 && strings.Contains(p.Message, "excessive aliasing") {
			found = true
		}
	}
	if !found {
		t.Errorf("problems %+v do not name argo/bomb.yaml:9 and its aliasing", d.Problems)
	}
	if len(d.Apps) != 1 || d.Apps[0].Name != "good" {
		t.Errorf("apps = %+v, want the good Application's", d.Apps)
	}
}

// TestNodeBudget: the apps of a render read at most Options.NodeBudget YAML nodes
// together, aliases expanded (issue 30: sixteen files of 8 KB, each an anchor of 4,000
// scalars and 95 aliases, took a check past 1 GB and the runtime died). In app order, an
// app whose build would cross it is not built and fails, naming its heaviest file; the
// apps that fit are built.
func TestNodeBudget(t *testing.T) {
	amplified := func(name string) string {
		var b strings.Builder
		b.WriteString("apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: " + name + "\nspec:\n  a: &a [")
		for i := range 400 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%s%d", name, i)
		}
		b.WriteString("]\n")
		for i := range 20 {
			fmt.Fprintf(&b, "  b%d: *a\n", i)
		}
		return b.String()
	}
	repo := files{}
	for _, app := range []string{"a", "b", "c"} {
		repo[app+"/kustomization.yaml"] = "resources: [small.yaml, big.yaml]\n"
		repo[app+"/small.yaml"] = nsYAML
		repo[app+"/big.yaml"] = amplified(app)
	}
	fsys, root := memRepo(t, repo)
	// Each app reads about 8,450 nodes (21 copies of the 402-node sequence): two fit.
	res := renderRepo(t, fsys, root, Options{NodeBudget: 20000, NodeBudgetFrom: "the test's budget"})
	for _, name := range []string{"a", "b"} {
		if app := appNamed(t, res, name); app.Err != nil || len(app.Objects) != 2 {
			t.Errorf("app %s: err %v, %d objects; want it built", name, app.Err, len(app.Objects))
		}
	}
	c := appNamed(t, res, "c")
	var be *BuildError
	if !errors.As(c.Err, &be) || !errors.Is(c.Err, ErrOverBudget) || be.File != "c/big.yaml" {
		t.Fatalf("app c: err %v, want ErrOverBudget naming c/big.yaml", c.Err)
	}
	for _, want := range []string{"the app's build reads 8", "the apps before it 1", "over the 20000 a render may read under the test's budget"} {
		if !strings.Contains(c.Err.Error(), want) {
			t.Errorf("error %q does not say %q", c.Err, want)
		}
	}
	// Without a budget every app is built.
	for _, a := range renderRepo(t, fsys, root, Options{}).Apps {
		if a.Err != nil {
			t.Errorf("app %s without a budget: %v", a.Name, a.Err)
		}
	}
}

// TestManifestFileCount: a repository of a million small files, or an app with
// directory recurse over them, had no answer in 120 s and grew past 875 MB (issue 30). Past
// MaxManifestFiles discovery stops with an error that says so.
func TestManifestFileCount(t *testing.T) {
	repo := files{"app/kustomization.yaml": "resources: [ns.yaml]\n", "app/ns.yaml": nsYAML}
	for i := range MaxManifestFiles {
		repo[fmt.Sprintf("many/d%03d/f%05d.yaml", i%500, i)] = "a: 1\n"
	}
	fsys, root := memRepo(t, repo)
	_, err := Discover(context.Background(), fsys, root, DiscoverOptions{})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "the repository holds more than 50000 YAML and JSON files; olmsync reads at most 50000") {
		t.Fatalf("err = %v, want the file count refused", err)
	}
}
