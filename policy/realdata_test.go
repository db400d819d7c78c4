package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/shareddata"
)

func readManifest(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// TestRealOperatorGroups runs OP002 and OP012 over the real OperatorGroups of public
// GitOps repositories and OLM's docs (../shared/data/manifests/operatorgroups): which
// shapes the ADR allows, and which groups OLM makes global (null spec, no spec, {},
// upgradeStrategy only).
func TestRealOperatorGroups(t *testing.T) {
	dir := shareddata.Path(t, "data/manifests/operatorgroups")
	want := map[string]struct{ refused, global bool }{
		"gc-compliance-operator.yaml":          {false, false},
		"gc-migration-toolkit-containers.yaml": {false, false},
		"gc-redhat-connectivity-link.yaml":     {false, true},
		"of-cluster-logging.yaml":              {false, false},
		"of-global-operators.yaml":             {false, true},
		"of-openshift-operators-redhat.yaml":   {false, true},
		"of-opf-kafka.yaml":                    {false, false},
		"of-rapidast-null-spec.yaml":           {false, true},
		"olm-quickstart-global-operators.yaml": {false, true},
		"olm-quickstart-olm-operators.yaml":    {false, false},
		"olmdocs-all-namespaces.yaml":          {false, true},
		"olmdocs-multi-namespace.yaml":         {true, false},
		"olmdocs-selector-bare-labels.yaml":    {true, false},
		"olmdocs-selector.yaml":                {true, false},
		"olmdocs-service-account.yaml":         {false, false},
		"olmdocs-single-namespace-other.yaml":  {false, false},
		"olmdocs-static-provided-apis.yaml":    {true, false},
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) != len(want) {
		t.Fatalf("found %d OperatorGroups (%v), want %d", len(files), err, len(want))
	}
	e := newEngine(t, Options{})
	for _, file := range files {
		name := filepath.Base(file)
		og := readManifest(t, file)
		// Alone in a cluster-scope app deploying to a namespace that is not the global
		// operators namespace, with no groups outside Git: OP012 fires exactly for groups
		// that select all namespaces.
		app := clusterScopeApp(entry(og, name, 1))
		app.Namespace = "from-the-app"
		in := Input{Config: Config{OperatorGroups: []ClusterOperatorGroup{}}, Apps: []App{app}}
		var rules []string
		for _, v := range evaluate(t, e, in) {
			rules = append(rules, v.Rule)
		}
		if got := slices.Contains(rules, "OP002"); got != want[name].refused {
			t.Errorf("%s: OP002 reported %v, want %v (all: %v)", name, got, want[name].refused, rules)
		}
		if got := slices.Contains(rules, "OP012"); got != want[name].global {
			t.Errorf("%s: global (OP012) %v, want %v (all: %v)", name, got, want[name].global, rules)
		}
	}
}

// TestRealSubscriptions puts the real Subscriptions in an individual app: those without
// metadata.namespace take the app's namespace (and pass OP007), the others are reported,
// and every one is traced back to its file.
func TestRealSubscriptions(t *testing.T) {
	dir := shareddata.Path(t, "data/manifests/subscriptions")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Subscriptions in %s: %v", dir, err)
	}
	app := individualApp("team-a", "team-a")
	wantOP007 := map[string]bool{}
	for _, file := range files {
		m := readManifest(t, file)
		name := filepath.Base(file)
		app.Objects = append(app.Objects, entry(m, name, 1))
		if ns := metadataString(m, "namespace"); ns != "" && ns != "team-a" {
			wantOP007[name] = true
		}
	}
	group := entry(operatorGroup("team-a", "team-a", map[string]any{"targetNamespaces": []any{"team-a"}}), "cs/og.yaml", 1)
	e := newEngine(t, Options{})
	gotOP007 := map[string]bool{}
	for _, v := range evaluate(t, e, cluster("", clusterScopeApp(group, entry(namespaceObject("team-a"), "cs/ns.yaml", 1)), app)) {
		if v.Rule == "OP007" {
			gotOP007[v.File] = true
		}
		if v.App == "team-a" && v.Line != 1 {
			t.Errorf("%s: violation %s not traced to its file: %+v", v.File, v.Rule, v)
		}
	}
	if len(wantOP007) == 0 || len(wantOP007) == len(files) {
		t.Fatalf("the real data should hold Subscriptions with and without namespaces; %d of %d have one", len(wantOP007), len(files))
	}
	for name := range wantOP007 {
		if !gotOP007[name] {
			t.Errorf("%s: in another namespace than the app's, but OP007 did not report it", name)
		}
	}
	for name := range gotOP007 {
		if !wantOP007[name] {
			t.Errorf("%s: OP007 reported it, but it is in the app's namespace", name)
		}
	}
}
