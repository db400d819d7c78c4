package render

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// textMarkSeeds are manifests whose documents textMarks must mark, or must leave to the
// trees, each for a reason of its own.
var textMarkSeeds = []string{
	nsYAML,
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # comment\n  namespace: b\ndata:\n  x: |\n    text\n---\n# between\napiVersion: v1\nkind: Secret\nmetadata:\n\n    name: s\nstringData: {a: b}\n",
	"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  \"name\": quoted\n",
	"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\n",
	"apiVersion: v1\rkind: ConfigMap\rmetadata:\r  name: cr\r",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  ? name\n  : explicit\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flow}\n",
	"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"json\"}}\n",
	"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: item\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  render.olmsync.dev/source: already\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: anchored\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  k: v\nmetadata:\n  labels:\n    a: b\n  name: late\n...\n",
	"  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: indented\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n- name: a sequence\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"line one\n    line two\"\n  namespace: n\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nel\u0085  namespace: n\n",
}

// FuzzTextMarks checks that marking a file's objects in its text (textMarks, insertMarks)
// hands kustomize what marking their trees (markTrees) does: wherever textMarks marks a
// file, the marked text parses to the same documents, markers included, as the file's trees
// marked and written out.
func FuzzTextMarks(f *testing.F) {
	for _, seed := range textMarkSeeds {
		f.Add([]byte(seed))
	}
	for _, seed := range sharedManifests(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, _, err := decodeCounted("in.yaml", data)
		if err != nil {
			return
		}
		roots := make([]*yaml.Node, len(docs))
		for i, d := range docs {
			roots[i] = d.Node
		}
		spots := textMarks(data, roots)
		if spots == nil {
			return
		}
		byText, err := decodeAll(insertMarks(data, "in.yaml", spots))
		if err != nil {
			t.Fatalf("the text marked does not parse: %v\n%s", err, insertMarks(data, "in.yaml", spots))
		}
		marked, ok := markTrees(roots, "in.yaml")
		if !ok {
			t.Fatalf("textMarks marks a file markTrees cannot:\n%s", data)
		}
		byTree, err := decodeAll(marked)
		if err != nil {
			t.Fatalf("the trees marked do not parse: %v", err)
		}
		if !reflect.DeepEqual(byText, byTree) {
			t.Fatalf("marked in the text:\n%v\nmarked in the trees:\n%v\ntext:\n%s", byText, byTree, insertMarks(data, "in.yaml", spots))
		}
	})
}

// decodeAll decodes every document of a YAML stream but the empty and null ones, which
// kustomize skips (the text keeps them; the trees are only of the others).
func decodeAll(data []byte) ([]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, v)
		}
	}
}

// TestTextMarks checks which of the seeds textMarks marks in the text; FuzzTextMarks checks
// that what it marks is what the trees would be.
func TestTextMarks(t *testing.T) {
	marked := map[int]bool{0: true, 1: true, 2: true, 3: true, 8: true, 11: true, 12: true, 13: true, 15: true}
	for i, seed := range textMarkSeeds {
		docs, _, err := decodeCounted("in.yaml", []byte(seed))
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		var roots []*yaml.Node
		for _, d := range docs {
			roots = append(roots, d.Node)
		}
		got := textMarks([]byte(seed), roots) != nil
		if got != marked[i] {
			t.Errorf("seed %d marked in the text: %v, want %v:\n%s", i, got, marked[i], seed)
		}
	}
}
