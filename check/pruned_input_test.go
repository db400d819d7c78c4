package check

import (
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/sources"
)

// neverFires is a users' rule that reads every object whole and finds nothing: with it,
// the rules read the whole input rather than the built-in rules' pruned one.
var neverFires = policy.PolicySource{Root: "org", FS: fstest.MapFS{"never.rego": {Data: []byte(`# METADATA
# title: Never fires
# custom:
#   id: ORG000
#   severity: warning
package org.never

deny contains "never" if {
	some app in input.apps
	some entry in app.objects
	json.marshal(entry.object) == ""
}
`)}}}

// TestBuiltinFindingsOverThePrunedInput: on gitops-catalog at its head and on the examples,
// the built-in rules find the same over the input pruned for them (objects outside OLM's
// groups as their apiVersion, kind and metadata) as over the whole input, which they read
// when a users' rule is evaluated beside them.
func TestBuiltinFindingsOverThePrunedInput(t *testing.T) {
	catalog := shareddata.Corpus(t, t.TempDir(), shareddata.GitOpsCatalog)
	trees := map[string]func(t *testing.T) *sources.Tree{
		"gitops-catalog": func(t *testing.T) *sources.Tree {
			tree, err := sources.OpenRevision(catalog, shareddata.GitOpsCatalogHead, sources.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			return tree
		},
	}
	for _, example := range []string{"gitops", "gitops-violations", "local"} {
		trees[example] = func(t *testing.T) *sources.Tree { return openTree(t, filepath.Join("..", "examples", example)) }
	}
	total := 0
	for name, open := range trees {
		t.Run(name, func(t *testing.T) {
			pruned := run(t, open(t), Options{})
			whole := run(t, open(t), Options{Policies: []policy.PolicySource{neverFires}})
			if diff := cmp.Diff(whole.Violations, pruned.Violations); diff != "" {
				t.Errorf("the built-in rules find other things over the pruned input (-whole +pruned):\n%s", diff)
			}
			total += len(pruned.Violations)
		})
	}
	if total == 0 {
		t.Error("no findings anywhere: the comparison proves little")
	}
}
