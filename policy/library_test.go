package policy

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/olmsync/olmsync/internal/shareddata"
)

// TestLibraryQueries: a library root's input is evaluated with the queries of the library
// rules alone (prepare). Its findings must be those of every rule's queries with the
// other rules' findings dropped, as before: over the real OLM manifests of
// ../shared/data/manifests, each alone and each folder together, and over objects that
// break every rule, with users' rules of both kinds beside the built-in ones.
func TestLibraryQueries(t *testing.T) {
	user := PolicySource{Root: "rules", FS: fstest.MapFS{
		"lib.rego": {Data: []byte("# METADATA\n# custom:\n#   id: ACME001\n#   library: true\npackage acme.lib\n\ndeny contains msg if {\n\tsome app in input.apps\n\tsome o in app.objects\n\to.object.kind == \"ConfigMap\"\n\tmsg := {\"msg\": \"a ConfigMap\", \"object\": {\"app\": app.name, \"kind\": \"ConfigMap\", \"namespace\": o.namespace, \"name\": o.object.metadata.name, \"apiVersion\": \"v1\"}}\n}\n")},
		"all.rego": {Data: []byte("# METADATA\n# custom:\n#   id: ACME002\npackage acme.all\n\ndeny contains \"some app\" if count(input.apps) > 0\n")},
	}}
	e := newEngine(t, Options{Policies: []PolicySource{user}})
	every := *e
	allQueries := *e.compiled
	allQueries.libraryQueries = allQueries.queries
	every.compiled = &allQueries
	if len(e.libraryQueries) == 0 || len(e.libraryQueries[0].bindings) >= len(e.queries[0].bindings) {
		t.Fatalf("the library query reads %d rules of %d", len(e.libraryQueries[0].bindings), len(e.queries[0].bindings))
	}

	var inputs []Input
	library := func(name string, objs ...Object) {
		app := App{Name: name, Path: name, Objects: objs}
		inputs = append(inputs, Input{Library: true, Apps: []App{app}})
	}
	breaking := []Object{
		entry(operatorGroup("team-a", "og", map[string]any{"targetNamespaces": []any{"team-a", "team-b"}}), "og.yaml", 1),
		entry(operatorGroup("team-a", "og2", nil), "og2.yaml", 1),
		entry(operatorGroup("openshift-operators", "global", nil), "global.yaml", 1),
		entry(subscription("team-a", "sub", "pkg"), "sub.yaml", 1),
		entry(subscription("nowhere", "lonely", "pkg"), "lonely.yaml", 1),
		entry(subscription("openshift-operators", "global-sub", "pkg"), "gsub.yaml", 1),
		entry(withSpec(subscription("team-a", "sub-csv", "pkg"), map[string]any{"name": "pkg", "source": "s", "sourceNamespace": "elsewhere", "startingCSV": "not a csv name"}), "sub-csv.yaml", 1),
		entry(manifest("operators.coreos.com/v1alpha1", "CatalogSource", "team-a", "cs"), "cs.yaml", 1),
		entry(manifest("operators.coreos.com/v1alpha1", "ClusterServiceVersion", "team-a", "csv.v1"), "csv.yaml", 1),
		entry(manifest("operators.coreos.com/v1alpha1", "InstallPlan", "team-a", "ip"), "ip.yaml", 1),
		entry(namespaceObject("team-a"), "ns.yaml", 1),
		entry(manifest("rbac.authorization.k8s.io/v1", "ClusterRole", "", "cr"), "cr.yaml", 1),
		entry(configMap("team-a", "cm"), "cm.yaml", 1),
	}
	library("breaking", breaking...)
	for i, o := range breaking {
		library(filepath.Join("alone", o.Source.File), breaking[i])
	}
	for _, dir := range []string{"operatorgroups", "subscriptions", "catalogsources", "clusterserviceversions"} {
		files, err := filepath.Glob(filepath.Join(shareddata.Path(t, "data/manifests/"+dir), "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %d files, %v", dir, len(files), err)
		}
		var all []Object
		for _, f := range files {
			o := entry(readManifest(t, f), dir+"/"+filepath.Base(f), 1)
			all = append(all, o)
			library(o.Source.File, o)
		}
		library(dir, all...)
	}

	got, err := e.Findings(context.Background(), inputs...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := every.Findings(context.Background(), inputs...)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with the library queries:\n%v\nwith every rule's:\n%v", got, want)
	}
	// Not vacuous: library rules find something there, and the other rules would too on
	// the same objects deployed to a cluster.
	rules := func(vs []Violation) []string {
		var ids []string
		for _, v := range vs {
			ids = append(ids, v.Rule)
		}
		slices.Sort(ids)
		return slices.Compact(ids)
	}
	deployed := slices.Clone(inputs[:1])
	deployed[0].Library = false
	deployed[0].Cluster = "c"
	all, err := e.Findings(context.Background(), deployed...)
	if err != nil {
		t.Fatal(err)
	}
	onLibrary, onCluster := rules(got), rules(all)
	t.Logf("rules found on library roots: %v; on a cluster: %v", onLibrary, onCluster)
	for _, id := range []string{"ACME001", "OP002", "OP004", "OP005", "OP010", "OP014", "OP015"} {
		if !slices.Contains(onLibrary, id) {
			t.Errorf("%s found nothing on the library roots", id)
		}
	}
	for _, id := range []string{"ACME002", "OP001", "OP011"} {
		if slices.Contains(onLibrary, id) || !slices.Contains(onCluster, id) {
			t.Errorf("%s: on library roots %v, on a cluster %v; want only on a cluster", id, slices.Contains(onLibrary, id), slices.Contains(onCluster, id))
		}
	}
}
