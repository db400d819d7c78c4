package render

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
)

// FuzzRenderApp renders one app whose kustomization and resource file are the fuzzer's,
// through the planner and kustomize, as `olmsync check` does with a pull request's files.
// It must never panic, hang or expand without bound (the planner bounds every file
// kustomize reads); an app that fails names a file of the repository; an app that renders
// has objects whose sources are files of the repository. Seeded with the example
// repositories' kustomizations and the shared data's manifests.
func FuzzRenderApp(f *testing.F) {
	kustomizations := []string{
		"resources:\n- res.yaml\n",
		"resources: [res.yaml]\nnamespace: ns\nnamePrefix: p-\ncommonLabels: {a: b}\n",
		"resources: [res.yaml]\npatches:\n- patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: x}\n    data: {a: b}\n",
		"resources: [res.yaml]\nconfigMapGenerator:\n- name: g\n  literals: [a=b]\n",
		"resources: [res.yaml, ../base]\n",
		"resources: [res.yaml]\ngenerators:\n- |\n  apiVersion: viaduct.ai/v1\n  kind: ksops\n  metadata: {name: s}\n",
		"resources: [res.yaml]\npatches:\n- patch: |\n" + yamltest.Indent(yamltest.Laughs(9), "    "),
	}
	_ = filepath.WalkDir(filepath.Join("..", "examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "kustomization.yaml" {
			if data, err := os.ReadFile(p); err == nil {
				kustomizations = append(kustomizations, string(data))
			}
		}
		return nil
	})
	resources := append([][]byte{[]byte(nsYAML), []byte(yamltest.Laughs(9)), []byte(yamltest.SelfAnchor)}, sharedManifests(f)...)
	for i, k := range kustomizations {
		f.Add([]byte(k), resources[i%len(resources)])
	}
	for i, r := range resources {
		f.Add([]byte(kustomizations[i%len(kustomizations)]), r)
	}
	f.Fuzz(func(t *testing.T, kustomization, resource []byte) {
		fsys, root := memRepo(t, files{
			"app/kustomization.yaml":  string(kustomization),
			"app/res.yaml":            string(resource),
			"base/kustomization.yaml": "resources: [cm.yaml]\n",
			"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\n",
		})
		res, err := Render(t.Context(), fsys, root, Options{})
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Render: %v", err)
			}
			return
		}
		for _, a := range res.Apps {
			if a.Err != nil {
				var be *BuildError
				if !errors.As(a.Err, &be) || be.File == "" {
					t.Fatalf("app %s: error %v (%T) names no file", a.Name, a.Err, a.Err)
				}
				continue
			}
			for _, o := range a.Objects {
				if o.Source.File == "" || filepath.IsAbs(o.Source.File) {
					t.Fatalf("object %s/%s: source %+v is not a repository file", o.Kind(), o.Name(), o.Source)
				}
			}
		}
	})
}
