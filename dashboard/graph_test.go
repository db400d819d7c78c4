package dashboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/olmsync/olmsync/reconcile/tree"
)

// TestBuildGraph: the tree of a Sync as a graph — one node per object, the inventory's
// copy of an object the tree reaches twice, OLM's chain as owns edges, an OperatorGroup's
// targets, and a catalog edge from the CatalogSource each Subscription resolves from,
// read when the Sync does not hold it.
func TestBuildGraph(t *testing.T) {
	const olm = "operators.coreos.com/v1alpha1"
	root := &tree.Node{APIVersion: "olmsync.dev/v1alpha1", Kind: "Sync", Namespace: "ops", Name: "platform", Children: []*tree.Node{
		{Kind: "App", Name: "cluster-scope", Sync: "Synced", Health: "Healthy", Children: []*tree.Node{
			{APIVersion: "v1", Kind: "Namespace", Name: "team", Sync: "Synced", Health: "Healthy"},
			{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: "team", Name: "og", Sync: "Synced", Health: "Healthy", Children: []*tree.Node{
				{APIVersion: "v1", Kind: "Namespace", Name: "team"},
				{APIVersion: "v1", Kind: "Namespace", Name: "other"},
			}},
			{APIVersion: olm, Kind: "CatalogSource", Namespace: "team", Name: "cat", Sync: "Synced", Health: "Healthy", Phase: "READY"},
		}},
		{Kind: "App", Name: "team", Sync: "Synced", Health: "WaitingForApproval", Children: []*tree.Node{
			{APIVersion: olm, Kind: "Subscription", Namespace: "team", Name: "widget", Sync: "Synced", Health: "WaitingForApproval", CatalogSource: "team/cat", Children: []*tree.Node{
				{APIVersion: olm, Kind: "InstallPlan", Namespace: "team", Name: "install-1", Health: "WaitingForApproval", Phase: "RequiresApproval", Children: []*tree.Node{
					{APIVersion: olm, Kind: "ClusterServiceVersion", Namespace: "team", Name: "widget.v1", Health: "Healthy", Phase: "Succeeded", Children: []*tree.Node{
						{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team", Name: "widget-operator", Health: "Healthy", Children: []*tree.Node{
							{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "team", Name: "widget-operator-1", Health: "Healthy", Children: []*tree.Node{
								{APIVersion: "v1", Kind: "Pod", Namespace: "team", Name: "widget-operator-1-a", Health: "Healthy", Phase: "Running"},
							}},
						}},
					}},
				}},
			}},
			{APIVersion: olm, Kind: "Subscription", Namespace: "team", Name: "global", Sync: "Synced", Health: "Healthy", CatalogSource: "olm/operators"},
		}},
	}}
	var read []types.NamespacedName
	g := buildGraph(root, func(k types.NamespacedName) *tree.Node {
		read = append(read, k)
		return &tree.Node{APIVersion: olm, Kind: "CatalogSource", Namespace: k.Namespace, Name: k.Name, Health: "Healthy", Phase: "READY"}
	})

	var ids []string
	nodes := map[string]GraphNode{}
	for _, n := range g.Nodes {
		ids = append(ids, n.ID)
		nodes[n.ID] = n
	}
	wantIDs := []string{
		"Sync.olmsync.dev/ops/platform", "App//cluster-scope", "Namespace//team", "OperatorGroup.operators.coreos.com/team/og", "Namespace//other",
		"CatalogSource.operators.coreos.com/team/cat", "App//team", "Subscription.operators.coreos.com/team/widget",
		"InstallPlan.operators.coreos.com/team/install-1", "ClusterServiceVersion.operators.coreos.com/team/widget.v1",
		"Deployment.apps/team/widget-operator", "ReplicaSet.apps/team/widget-operator-1", "Pod/team/widget-operator-1-a",
		"Subscription.operators.coreos.com/team/global", "CatalogSource.operators.coreos.com/olm/operators",
	}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("nodes (-want +got)\n%s", diff)
	}
	type edge struct{ from, to, kind string }
	var got []edge
	for _, e := range g.Edges {
		got = append(got, edge{e.From, e.To, e.Kind})
	}
	want := []edge{
		{"Sync.olmsync.dev/ops/platform", "App//cluster-scope", EdgeApp},
		{"App//cluster-scope", "Namespace//team", EdgeApp},
		{"App//cluster-scope", "OperatorGroup.operators.coreos.com/team/og", EdgeApp},
		{"OperatorGroup.operators.coreos.com/team/og", "Namespace//team", EdgeTargets},
		{"OperatorGroup.operators.coreos.com/team/og", "Namespace//other", EdgeTargets},
		{"App//cluster-scope", "CatalogSource.operators.coreos.com/team/cat", EdgeApp},
		{"Sync.olmsync.dev/ops/platform", "App//team", EdgeApp},
		{"App//team", "Subscription.operators.coreos.com/team/widget", EdgeApp},
		{"Subscription.operators.coreos.com/team/widget", "InstallPlan.operators.coreos.com/team/install-1", EdgeOwns},
		{"InstallPlan.operators.coreos.com/team/install-1", "ClusterServiceVersion.operators.coreos.com/team/widget.v1", EdgeOwns},
		{"ClusterServiceVersion.operators.coreos.com/team/widget.v1", "Deployment.apps/team/widget-operator", EdgeOwns},
		{"Deployment.apps/team/widget-operator", "ReplicaSet.apps/team/widget-operator-1", EdgeOwns},
		{"ReplicaSet.apps/team/widget-operator-1", "Pod/team/widget-operator-1-a", EdgeOwns},
		{"App//team", "Subscription.operators.coreos.com/team/global", EdgeApp},
		{"CatalogSource.operators.coreos.com/team/cat", "Subscription.operators.coreos.com/team/widget", EdgeCatalog},
		{"CatalogSource.operators.coreos.com/olm/operators", "Subscription.operators.coreos.com/team/global", EdgeCatalog},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(edge{})); diff != "" {
		t.Errorf("edges (-want +got)\n%s", diff)
	}

	// The namespace both applied and targeted is the applied one, drawn in its app.
	if ns := nodes["Namespace//team"]; !ns.Managed || ns.Sync != "Synced" || ns.Parent != "App//cluster-scope" {
		t.Errorf("Namespace team: %+v, want the inventory's, managed, in app cluster-scope", ns)
	}
	if ns := nodes["Namespace//other"]; ns.Managed || ns.Parent != "OperatorGroup.operators.coreos.com/team/og" {
		t.Errorf("Namespace other: %+v, want a target only, below the OperatorGroup", ns)
	}
	for id, managed := range map[string]bool{
		"Subscription.operators.coreos.com/team/widget":   true,
		"InstallPlan.operators.coreos.com/team/install-1": false,
		"Pod/team/widget-operator-1-a":                    false,
		"App//team":                                       false,
	} {
		if nodes[id].Managed != managed {
			t.Errorf("%s managed %v, want %v", id, nodes[id].Managed, managed)
		}
	}
	if ip := nodes["InstallPlan.operators.coreos.com/team/install-1"]; ip.Phase != "RequiresApproval" || ip.Health != "WaitingForApproval" {
		t.Errorf("InstallPlan: %+v", ip)
	}
	if cs := nodes["CatalogSource.operators.coreos.com/olm/operators"]; !cs.External || cs.Parent != "Sync.olmsync.dev/ops/platform" || cs.Phase != "READY" {
		t.Errorf("the global CatalogSource: %+v, want external, beside the Sync, READY", cs)
	}
	if diff := cmp.Diff([]types.NamespacedName{{Namespace: "olm", Name: "operators"}}, read); diff != "" {
		t.Errorf("CatalogSources read (-want +got)\n%s", diff)
	}

	// Without a reader of CatalogSources, one outside the Sync is left out.
	if g := buildGraph(root, nil); len(g.Nodes) != len(wantIDs)-1 {
		t.Errorf("without a reader: %d nodes, want %d", len(g.Nodes), len(wantIDs)-1)
	}
}
