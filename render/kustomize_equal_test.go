package render

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// TestRendersWhatKustomizeRenders: on redhat-cop/gitops-catalog at its head and on this
// repository's examples, every app that is a kustomization renders to the objects kustomize
// alone (krusty, with the options olmsync builds with) renders from the repository's files,
// in the same order, value for value, whether its resource files are marked in their text
// (textMarks) or through their trees (markTrees): the source markers olmsync writes into the
// files it hands kustomize, and takes out of the output, change nothing else. Written out
// from its tree, a folded block scalar (">") with blank lines came out with one more line
// break (a Tekton Task's script in gitops-catalog) until unfold. And every file of objects
// in gitops-catalog is marked in its text.
func TestRendersWhatKustomizeRenders(t *testing.T) {
	catalog := shareddata.Corpus(t, t.TempDir(), shareddata.GitOpsCatalog)
	gittest.Git(t, catalog, "checkout", "-q", shareddata.GitOpsCatalogHead)
	roots := map[string]string{"gitops-catalog": catalog}
	for _, ex := range []string{"gitops", "gitops-violations", "local"} {
		roots[ex] = filepath.Join("..", "examples", ex)
	}
	for name, root := range roots {
		for _, byTree := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/trees=%v", name, byTree), func(t *testing.T) {
				rendersWhatKustomizeRenders(t, root, Options{markByTree: byTree})
			})
		}
	}

	files, inText := 0, 0
	err := filepath.WalkDir(catalog, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == ".git" {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".yaml") || strings.HasPrefix(d.Name(), "kustomization") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		docs, _, err := decodeCounted(path, data)
		if err != nil || len(docs) == 0 {
			return nil //nolint:nilerr // not a manifest file: not counted
		}
		roots := make([]*yaml.Node, len(docs))
		for i, d := range docs {
			if scalarAt(d.Node, "apiVersion") == "" || scalarAt(d.Node, "kind") == "" {
				return nil // a patch, a workflow: not objects
			}
			roots[i] = d.Node
		}
		files++
		if textMarks(data, roots) != nil {
			inText++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gitops-catalog: %d of %d files of objects marked in their text", inText, files)
	if files < 500 || inText*10 < files*9 {
		t.Errorf("%d of %d files of objects marked in their text: want 9 in 10 of at least 500", inText, files)
	}
}

// TestFoldedScalarsAsKustomizeRendersThem: a folded block scalar with blank lines renders as
// kustomize alone renders it, in files marked in their text (an object, a List) and in one
// that can only be marked through its tree (its metadata in flow style), whose app is then
// traced by kustomize's origin annotations instead; each object with its file and line.
func TestFoldedScalarsAsKustomizeRendersThem(t *testing.T) {
	script := "  script: >\n    #!/bin/sh\n\n\n    cat <<EOF\n\n    <settings>\n      <mirrors>\n    EOF\n"
	fsys, root := diskRepo(t, files{
		"text/kustomization.yaml":   "resources:\n- task.yaml\n- list.yaml\n",
		"text/task.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n" + script,
		"text/list.yaml":            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: listed\n  data:\n  " + strings.ReplaceAll(script, "\n", "\n  ") + "\n",
		"origin/kustomization.yaml": "resources:\n- flow.yaml\n",
		"origin/flow.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flow}\ndata:\n" + script,
	})
	res, err := Render(context.Background(), fsys, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Source{
		"text":   {{File: "text/list.yaml", Line: 4}, {File: "text/task.yaml", Line: 1}}, // kustomize sorts them
		"origin": {{File: "origin/flow.yaml", Line: 1}},
	}
	for _, app := range res.Apps {
		if app.Err != nil {
			t.Fatalf("%s: %v", app.Path, app.Err)
		}
		got := make([]any, len(app.Objects))
		var sources []Source
		for i, o := range app.Objects {
			got[i] = normalized(t, o.Manifest.Object)
			sources = append(sources, Source{File: o.Source.File, Line: o.Source.Line})
		}
		if diff := cmp.Diff(kustomizeAlone(t, filepath.Join(root, app.Path)), got); diff != "" {
			t.Errorf("%s: olmsync renders other objects than kustomize (-kustomize +olmsync):\n%s", app.Path, diff)
		}
		if diff := cmp.Diff(want[app.Path], sources); diff != "" {
			t.Errorf("%s: sources (-want +got):\n%s", app.Path, diff)
		}
		delete(want, app.Path)
	}
	if len(want) > 0 {
		t.Errorf("apps not rendered: %v", want)
	}
}

// rendersWhatKustomizeRenders renders the repository at root and compares each app that is
// a kustomization with what kustomize alone renders of it.
func rendersWhatKustomizeRenders(t *testing.T, root string, opts Options) {
	t.Helper()
	res, err := Render(context.Background(), filesys.MakeFsOnDisk(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, app := range res.Apps {
		if app.Err != nil || !isKustomization(filepath.Join(root, app.Path)) {
			continue
		}
		want := kustomizeAlone(t, filepath.Join(root, app.Path))
		got := make([]any, len(app.Objects))
		for i, o := range app.Objects {
			got[i] = normalized(t, o.Manifest.Object)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("app %s: olmsync renders other objects than kustomize (-kustomize +olmsync):\n%s", app.Name, diff)
		}
		compared++
	}
	t.Logf("%d apps compared with kustomize", compared)
	if compared == 0 {
		t.Fatal("no app compared")
	}
}

func isKustomization(dir string) bool {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// kustomizeAlone is what krusty renders of dir with the options olmsync builds with,
// each object normalized.
func kustomizeAlone(t *testing.T, dir string) []any {
	t.Helper()
	k := krusty.MakeKustomizer(&krusty.Options{
		Reorder:          krusty.ReorderOptionUnspecified,
		LoadRestrictions: types.LoadRestrictionsRootOnly,
		PluginConfig:     types.DisabledPluginConfig(),
	})
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	var out []any
	for _, r := range m.Resources() {
		obj, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, normalized(t, obj))
	}
	return out
}

// normalized is v through JSON, so that kustomize's ints and olmsync's int64s compare.
func normalized(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
