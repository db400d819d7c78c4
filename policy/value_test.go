package policy

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/olmsync/olmsync/internal/shareddata"
)

// realManifestsInput is the real OLM manifests of ../shared/data/manifests (CatalogSources,
// CSVs, OperatorGroups, Subscriptions of public repositories and OLM's docs) in one cluster,
// with a Deployment and a CRD: the OperatorGroups, CatalogSources and the CRD in its
// cluster-scope app, the others each in an app of its own.
func realManifestsInput(t *testing.T) Input {
	t.Helper()
	dir := shareddata.Path(t, "data/manifests")
	scope := []Object{entry(withSpec(manifest("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com"),
		map[string]any{"group": "example.com", "names": map[string]any{"kind": "Widget"}, "scope": "Namespaced"}), "crds/widget.yaml", 1)}
	var apps []App
	for _, kind := range []string{"catalogsources", "clusterserviceversions", "operatorgroups", "subscriptions"} {
		files, err := filepath.Glob(filepath.Join(dir, kind, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no manifests (%v)", kind, err)
		}
		for _, file := range files {
			o := entry(readManifest(t, file), "manifests/"+kind+"/"+filepath.Base(file), 1)
			if kind == "catalogsources" || kind == "operatorgroups" {
				scope = append(scope, o)
				continue
			}
			name := strings.TrimSuffix(filepath.Base(file), ".yaml")
			deployment := withSpec(manifest("apps/v1", "Deployment", "", "web"), map[string]any{"replicas": int64(2)})
			apps = append(apps, individualApp(name, "team-"+name, o, entry(deployment, "apps/"+name+"/web.yaml", 3)))
		}
	}
	return cluster("real", append([]App{clusterScopeApp(scope...)}, apps...)...)
}

// valueInputs are inputs the value tests build both ways: the ADR's repository, real OLM
// manifests, the benchmark's repository (which breaks seven rules), and a library root.
func valueInputs(t *testing.T) map[string]Input {
	t.Helper()
	library := cluster("", individualApp("catalog/etcd", "", entry(subscription("", "etcd", "etcd"), "catalog/etcd/sub.yaml", 1)))
	library.Library = true
	return map[string]Input{
		"adr":       adrRepository(),
		"real":      realManifestsInput(t),
		"benchmark": benchmarkRepository(1, 60, 1000)[0],
		"library":   library,
	}
}

// TestASTValueIsTheInputsValue checks that the value the rules read, built as OPA's values
// (astValue), is the input's JSON-shaped value (Input.value, which the sandbox's child
// reads and TestInputValueMatchesJSON holds to the documented JSON form) converted.
func TestASTValueIsTheInputsValue(t *testing.T) {
	for name, in := range valueInputs(t) {
		t.Run(name, func(t *testing.T) {
			in := in.Complete()
			want, err := ast.InterfaceToValue(in.value())
			if err != nil {
				t.Fatal(err)
			}
			got, err := in.astValue(false)
			if err != nil {
				t.Fatal(err)
			}
			if got.Compare(want) != 0 {
				t.Errorf("astValue differs from the input's value:\ngot:  %v\nwant: %v", got, want)
			}
		})
	}
}

// TestBuiltinRulesReadWhatThePrunedInputHolds checks that the built-in rules find the same
// over the input pruned for them (astValue(true): objects outside OLM's groups as their
// apiVersion, kind and metadata) as over the whole input, on inputs where they find much,
// and that the pruned value is smaller.
func TestBuiltinRulesReadWhatThePrunedInputHolds(t *testing.T) {
	e := newEngine(t, Options{})
	total := 0
	for name, in := range valueInputs(t) {
		t.Run(name, func(t *testing.T) {
			in := in.Complete()
			queries := e.queries
			if in.Library {
				queries = e.libraryQueries
			}
			whole, err := in.astValue(false)
			if err != nil {
				t.Fatal(err)
			}
			pruned, err := in.astValue(true)
			if err != nil {
				t.Fatal(err)
			}
			fromWhole, err := e.evaluateOver(context.Background(), &in, queries, whole, nil)
			if err != nil {
				t.Fatal(err)
			}
			fromPruned, err := e.evaluateOver(context.Background(), &in, queries, pruned, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fromPruned, fromWhole) {
				t.Errorf("the built-in rules find other things in the pruned input:\npruned: %v\nwhole:  %v", foundOf(fromPruned), foundOf(fromWhole))
			}
			if len(pruned.String()) >= len(whole.String()) && name != "library" {
				t.Errorf("the pruned input is no smaller (%d bytes against %d)", len(pruned.String()), len(whole.String()))
			}
			total += len(fromWhole)
		})
	}
	if total < 20 {
		t.Errorf("the rules found %d things in all: the comparison proves little", total)
	}
}

// TestUsersRulesReadTheWholeInput: a users' rule evaluated in this process reads fields the
// built-in rules never read (a Deployment's spec), so the input is not pruned for it.
func TestUsersRulesReadTheWholeInput(t *testing.T) {
	e := newEngine(t, Options{Policies: []PolicySource{{Root: "org", FS: fstest.MapFS{"replicas.rego": {Data: []byte(`# METADATA
# title: Two replicas at most
# custom:
#   id: ORG001
#   severity: error
package org.replicas

import data.olmsync.lib

deny contains result if {
	some app in input.apps
	some entry in app.objects
	entry.object.kind == "Deployment"
	entry.object.spec.replicas > 1
	result := {"msg": "too many replicas", "object": lib.ref(app, entry)}
}
`)}}}}})
	vs, err := e.Evaluate(context.Background(), realManifestsInput(t))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range vs {
		if v.Rule == "ORG001" {
			n++
		}
	}
	if n == 0 {
		t.Error("the users' rule did not see the Deployments' spec")
	}
}
