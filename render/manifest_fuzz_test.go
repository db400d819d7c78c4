package render

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// maxSeed keeps the fuzzers' inputs small enough for many executions a second.
const maxSeed = 32 << 10

// sharedManifests are the shared data's manifests (Subscriptions, OperatorGroups,
// CatalogSources, CSVs), read at fuzz time, as seeds.
func sharedManifests(f *testing.F) [][]byte {
	var out [][]byte
	for _, file := range shareddata.Files(f, "data/manifests", shareddata.HasExt(".yaml", ".yml"), 0) {
		// Every seed runs before fuzzing starts, and `make fuzz` gives a target seconds.
		if len(file.Data) <= maxSeed && len(out) < 40 {
			out = append(out, file.Data)
		}
	}
	return out
}

// FuzzManifests feeds the manifest reader (every file of a plain folder, every resource file
// before kustomize sees it) arbitrary input. It must never panic; a failure must be a
// YAMLError naming the file; every document it accepts must convert to an unstructured
// object or fail with an error, and each recorded line must be inside the input.
func FuzzManifests(f *testing.F) {
	for _, seed := range []string{
		nsYAML,
		"# header\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n",
		"a: &x {b: 1}\nc:\n  <<: *x\n  d: 2\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"X\", \"metadata\": {\"name\": \"x\"}, \"n\": 1e400}",
		"a: 1\na: 2\n",
		"- a\n- b\n",
		"x: !!binary aGVsbG8=\ny: 2001-12-14\nz: 0x1F\n",
		"a: [\n",
		yamltest.Laughs(9),
		yamltest.SelfAnchor,
	} {
		f.Add([]byte(seed))
	}
	for _, seed := range sharedManifests(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := decodeDocs("in.yaml", data)
		if err != nil {
			var ye *YAMLError
			if !errors.As(err, &ye) || ye.File != "in.yaml" || !strings.HasPrefix(err.Error(), "in.yaml") {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			if lines := yamltest.MaxLines(data); ye.Line < 0 || ye.Line > lines {
				t.Fatalf("error line %d outside the input's %d lines", ye.Line, lines)
			}
			return
		}
		lines := yamltest.MaxLines(data)
		for _, d := range docs {
			for _, md := range indexDoc(d.Node) {
				if md.Line < 1 || md.Line > lines {
					t.Fatalf("document line %d outside the input's %d lines", md.Line, lines)
				}
			}
			if d.Node.Kind == yaml.MappingNode {
				if u, err := toUnstructured(yaml.NewRNode(d.Node)); err == nil {
					_ = u.DeepCopy() // panics on a value unstructured cannot hold
				}
			}
		}
	})
}
