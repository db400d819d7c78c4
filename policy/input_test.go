package policy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
)

func TestCompleteDecidesNamespaceAndScope(t *testing.T) {
	in := cluster("cl1",
		clusterScopeApp(
			entry(crd("example.com", "Widget", "Cluster"), "cs/crd.yaml", 1),
			entry(namespaceObject("team-a"), "cs/ns.yaml", 1),
		),
		individualApp("team-a", "team-a",
			entry(configMap("", "from-app"), "a/cm.yaml", 1),
			entry(configMap("team-b", "own"), "a/cm.yaml", 5),
			entry(manifest("example.com/v1", "Widget", "team-a", "w"), "a/w.yaml", 1),                    // cluster-scoped by the CRD
			entry(manifest("rbac.authorization.k8s.io/v1", "ClusterRole", "team-a", "r"), "a/r.yaml", 1), // namespace ignored
			entry(manifest("example.com/v1", "Gadget", "", "g"), "a/g.yaml", 1),
			Object{Object: configMap("", "preset"), Namespace: "chosen", Scope: ScopeNamespaced},
		),
		individualApp("nowhere", "", entry(configMap("", "no-namespace"), "n/cm.yaml", 1)),
	)
	got := in.Complete()
	type placed struct {
		Name      string
		Namespace string
		Scope     Scope
	}
	var places []placed
	for _, app := range got.Apps {
		for _, o := range app.Objects {
			places = append(places, placed{metadataString(o.Object, "name"), o.Namespace, o.Scope})
		}
	}
	want := []placed{
		{"widgets.example.com", "", ScopeCluster},
		{"team-a", "", ScopeCluster},
		{"from-app", "team-a", ScopeNamespaced},
		{"own", "team-b", ScopeNamespaced},
		{"w", "", ScopeCluster},
		{"r", "", ScopeCluster},
		{"g", "team-a", ScopeUnknown},
		{"preset", "chosen", ScopeNamespaced},
		{"no-namespace", "", ScopeNamespaced},
	}
	if diff := cmp.Diff(want, places); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
	if got.APIVersion != InputAPIVersion || got.Kind != InputKind || got.Cluster != "cl1" {
		t.Errorf("header = %s %s %q", got.APIVersion, got.Kind, got.Cluster)
	}
	// The caller's input is left alone.
	if in.Apps[1].Objects[0].Namespace != "" || in.Apps[1].Objects[0].Scope != "" || in.APIVersion != "" {
		t.Error("Complete changed its receiver's objects")
	}
}

func TestCompleteConfigDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{"empty", Config{}, DefaultConfig()},
		{
			"an empty list of groups means none",
			Config{OperatorGroups: []ClusterOperatorGroup{}},
			Config{
				MarketplaceNamespace: DefaultMarketplaceNamespace, GlobalOperatorsNamespace: DefaultGlobalOperatorsNamespace,
				OperatorGroups: []ClusterOperatorGroup{}, MetaOperators: []string{},
			},
		},
		{
			"set values are kept",
			Config{
				MarketplaceNamespace: "olm", GlobalOperatorsNamespace: "operators",
				OperatorGroups: []ClusterOperatorGroup{{Namespace: "operators", Name: "global-operators", Global: true}},
				MetaOperators:  []string{"opendatahub-operator"},
			},
			Config{
				MarketplaceNamespace: "olm", GlobalOperatorsNamespace: "operators",
				OperatorGroups: []ClusterOperatorGroup{{Namespace: "operators", Name: "global-operators", Global: true, TargetNamespaces: []string{}}},
				MetaOperators:  []string{"opendatahub-operator"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Input{Config: tt.in}.Complete().Config
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInputValueMatchesJSON checks that the value the rules read is the documented JSON
// form of the input, field for field: the value is built by hand for speed, so it must
// not drift from the struct tags.
func TestInputValueMatchesJSON(t *testing.T) {
	sub := subscription("openshift-operators", "etcd", "etcd")
	sub["spec"].(map[string]any)["replicas"] = int64(3) // render's maps hold int64
	in := Input{
		Cluster: "cl1",
		Config: Config{
			MetaOperators: []string{"opendatahub-operator"},
			OperatorGroups: []ClusterOperatorGroup{
				{Namespace: "openshift-operators", Name: "global-operators", Global: true, TargetNamespaces: []string{}},
				{Namespace: "team-a", Name: "team-a", TargetNamespaces: []string{"team-a"}},
				{Namespace: "team-b", Name: "team-b"}, // nil targets: [] in both forms
			},
		},
		Apps: []App{
			clusterScopeApp(entry(sub, "cs/sub.yaml", 4)),
			individualApp("team-a", "team-a", entry(configMap("", "settings"), "a/cm.yaml", 1)),
			individualApp("empty", "empty"), // nil objects: [] in both forms
		},
	}.Complete()
	fromValue, err := ast.InterfaceToValue(in.value())
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		t.Fatal(err)
	}
	fromJSON, err := ast.InterfaceToValue(generic)
	if err != nil {
		t.Fatal(err)
	}
	if fromValue.Compare(fromJSON) != 0 {
		t.Errorf("input value differs from its JSON form:\nvalue: %v\njson:  %v", fromValue, fromJSON)
	}
}
