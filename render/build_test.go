package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestToUnstructuredMatchesJSON: decoding a node straight to a map gives what kubectl sends
// for the same YAML (sigs.k8s.io/yaml's YAMLToJSON, then a JSON decode).
func TestToUnstructuredMatchesJSON(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  date: 2026-12-31\n  num: \"1\"\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels: {x: \"true\"}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: c\n        ports: [{containerPort: 8080}]\n        resources: {limits: {cpu: 0.5, memory: 1e3}}\n",
		"apiVersion: v1\nkind: X\nmetadata:\n  name: x\nspec:\n  empty: null\n  list: []\n  map: {}\n  float: 1.0\n  big: 9007199254740993\n  neg: -4\n  enabled: true\n  when: 2001-12-14t21:59:43.10-05:00\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"J\", \"metadata\": {\"name\": \"j\"}, \"spec\": {\"n\": 12, \"f\": 1.25}}",
		"apiVersion: v1\nkind: M\nmetadata:\n  name: m\nbase: &b {a: 1, b: 2}\nspec:\n  <<: *b\n  b: 3\n  hex: 0x1F\n",
	}
	for _, doc := range docs {
		rn, err := yaml.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		data, err := sigsyaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := utiljson.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		got, err := toUnstructured(rn)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.Object); diff != "" {
			t.Errorf("%s: (-json +direct):\n%s", doc, diff)
		}
		_ = got.DeepCopy() // panics on a type unstructured does not hold
	}
}

func TestJSONValueRefusesWhatJSONCannotHold(t *testing.T) {
	rn, err := yaml.Parse("apiVersion: v1\nkind: X\nmetadata:\n  name: x\nspec:\n  n: .inf\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toUnstructured(rn); err == nil {
		t.Error("an infinite number was accepted")
	}
}

func TestMatchDoc(t *testing.T) {
	docs := []manifestDoc{
		{Line: 1, APIVersion: "v1", Kind: "ConfigMap", Name: "a"},
		{Line: 5, APIVersion: "v1", Kind: "ConfigMap", Name: "ab", Namespace: "x"},
		{Line: 9, APIVersion: "v1", Kind: "ConfigMap", Name: "ab", Namespace: "y"},
		{Line: 13, APIVersion: "apps/v1", Kind: "Deployment", Name: "a"},
		{Line: 20, APIVersion: "example.com/v1", Kind: "ConfigMap", Name: "a"},
	}
	tests := []struct {
		apiVersion, kind, name, namespace string
		want                              int
	}{
		{"v1", "ConfigMap", "a", "", 1},
		{"v1", "ConfigMap", "pre-a-suf", "", 1},
		{"v1", "ConfigMap", "pre-ab", "y", 9},
		{"v1", "ConfigMap", "pre-ab", "x", 5},
		{"v1", "ConfigMap", "ab", "z", 5},
		{"apps/v1", "Deployment", "renamed", "", 13},
		{"example.com/v2", "ConfigMap", "p-a", "", 20},
		{"v1", "Secret", "a", "", 0},
	}
	for _, tt := range tests {
		if got := matchDoc(docs, tt.apiVersion, tt.kind, tt.name, tt.namespace); got != tt.want {
			t.Errorf("matchDoc(%s %s %s/%s) = %d, want %d", tt.apiVersion, tt.kind, tt.namespace, tt.name, got, tt.want)
		}
	}
}

func TestIsRemote(t *testing.T) {
	tests := []struct {
		ref          string
		base, remote bool
	}{
		{"../base", false, false},
		{"base/kustomization.yaml", false, false},
		{"github.com/org/repo/base?ref=v1", true, false},
		{"GitHub.com:org/repo", true, false},
		{"git@gitlab.example.com:org/repo.git", true, false},
		{"git::https://example.com/repo", true, false},
		{"https://example.com/repo.git//base", true, true},
		{"http://example.com/x.yaml", true, true},
		{"ssh://git@example.com/repo", true, false},
		{"file:///tmp/repo", true, false},
		{"name@v1/base", true, false}, // kustomize reads "name@" as a user
		{"./cert-manager@v1", false, false},
	}
	for _, tt := range tests {
		if isRemoteBase(tt.ref) != tt.base || isRemoteFile(tt.ref) != tt.remote {
			t.Errorf("%q: base %t remote file %t; want %t %t", tt.ref, isRemoteBase(tt.ref), isRemoteFile(tt.ref), tt.base, tt.remote)
		}
	}
}
