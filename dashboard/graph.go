package dashboard

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/tree"
)

// Graph is the resource graph of a Sync, which the page draws left to right: a node per
// object — one the tree reaches twice, such as a namespace an OperatorGroup targets and
// the Sync also applies, is one node with both edges — and an edge from each node to
// what it holds or leads to.
type Graph struct {
	Nodes []GraphNode `json:"nodes"`
	Edges []GraphEdge `json:"edges"`
}

// GraphNode is one object of the graph, with what reconcile/tree says of it.
type GraphNode struct {
	// ID names the object: Kind.group/namespace/name ("Kind/namespace/name" in the core
	// group; an app is "App//name").
	ID string `json:"id"`
	// Parent is the node it is drawn beside: the app of an object the Sync applies, else
	// the first node with an edge to it (the Sync, for a CatalogSource outside it).
	Parent     string `json:"parent,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Note       string `json:"note,omitempty"`
	Sync       string `json:"sync,omitempty"`
	Health     string `json:"health,omitempty"`
	Phase      string `json:"phase,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Message    string `json:"message,omitempty"`
	// Managed: an object of the Sync's inventory, applied from Git, so it has a desired
	// manifest and a diff. What OLM made, and the namespaces an OperatorGroup targets,
	// are not.
	Managed bool `json:"managed,omitempty"`
	// External: a CatalogSource outside the Sync (a global catalog), shown because a
	// Subscription of the Sync resolves from it.
	External bool `json:"external,omitempty"`
}

// GraphEdge leads from one node to another.
type GraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Kind is EdgeApp, EdgeOwns, EdgeTargets or EdgeCatalog.
	Kind string `json:"kind"`
}

// The kinds of GraphEdge.
const (
	// EdgeApp: the Sync has the app; the app renders the object.
	EdgeApp = "app"
	// EdgeOwns: OLM's chain and what it runs — Subscription → InstallPlan → CSV →
	// Deployment → ReplicaSet → Pod.
	EdgeOwns = "owns"
	// EdgeTargets: an OperatorGroup targets the namespace.
	EdgeTargets = "targets"
	// EdgeCatalog: a Subscription resolves from the CatalogSource.
	EdgeCatalog = "catalog"
)

// NodeID is the ID of an object's node.
func NodeID(apiVersion, kind, namespace, name string) string {
	k := kind
	if g := groupOf(apiVersion); g != "" {
		k += "." + g
	}
	return k + "/" + namespace + "/" + name
}

func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ""
	}
	return gv.Group
}

// buildGraph makes the graph of a Sync's tree (built with Apps). catalog reads a
// CatalogSource a Subscription resolves from that the tree does not hold; nil leaves
// such a one out.
func buildGraph(root *tree.Node, catalog func(types.NamespacedName) *tree.Node) *Graph {
	g := &Graph{Nodes: []GraphNode{}, Edges: []GraphEdge{}}
	index := map[string]int{}
	edges := map[[2]string]bool{}
	addEdge := func(from, to, kind string) {
		if k := [2]string{from, to}; !edges[k] {
			edges[k] = true
			g.Edges = append(g.Edges, GraphEdge{From: from, To: to, Kind: kind})
		}
	}
	var subscriptions []*tree.Node
	var walk func(n *tree.Node, parent *tree.Node)
	walk = func(n *tree.Node, parent *tree.Node) {
		node := graphNode(n)
		if parent != nil {
			node.Parent = idOf(parent)
			node.Managed = parent.Kind == "App" && n.Kind != "App"
		}
		if i, seen := index[node.ID]; seen {
			g.Nodes[i] = merge(g.Nodes[i], node)
		} else {
			index[node.ID] = len(g.Nodes)
			g.Nodes = append(g.Nodes, node)
		}
		if parent != nil {
			addEdge(node.Parent, node.ID, edgeKind(parent, n))
		}
		if n.CatalogSource != "" {
			subscriptions = append(subscriptions, n)
		}
		for _, c := range n.Children {
			walk(c, n)
		}
	}
	walk(root, nil)
	for _, sub := range subscriptions {
		ns, name, _ := strings.Cut(sub.CatalogSource, "/")
		id := NodeID(operatorsv1alpha1.SchemeGroupVersion.String(), "CatalogSource", ns, name)
		if _, ok := index[id]; !ok {
			if catalog == nil {
				continue
			}
			n := graphNode(catalog(types.NamespacedName{Namespace: ns, Name: name}))
			n.Parent, n.External = idOf(root), true
			index[id] = len(g.Nodes)
			g.Nodes = append(g.Nodes, n)
		}
		addEdge(id, idOf(sub), EdgeCatalog)
	}
	return g
}

func idOf(n *tree.Node) string {
	if n.Kind == "App" {
		return "App//" + n.Name
	}
	return NodeID(n.APIVersion, n.Kind, n.Namespace, n.Name)
}

func graphNode(n *tree.Node) GraphNode {
	return GraphNode{ID: idOf(n), APIVersion: n.APIVersion, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name,
		Note: n.Note, Sync: n.Sync, Health: n.Health, Phase: n.Phase, Reason: n.Reason, Message: n.Message}
}

// merge is one node of an object the tree reaches twice: the inventory's (applied from
// Git, in its app) first, each field it lacks from the other.
func merge(a, b GraphNode) GraphNode {
	if b.Managed && !a.Managed {
		a, b = b, a
	}
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	for _, f := range [][2]*string{{&a.Note, &b.Note}, {&a.Sync, &b.Sync}, {&a.Health, &b.Health}, {&a.Phase, &b.Phase},
		{&a.Reason, &b.Reason}, {&a.Message, &b.Message}, {&a.APIVersion, &b.APIVersion}} {
		fill(f[0], *f[1])
	}
	return a
}

// edgeKind names the edge from a tree node to its child.
func edgeKind(parent, child *tree.Node) string {
	switch {
	case parent.Kind == olmsyncv1alpha1.SyncKind || parent.Kind == "App":
		return EdgeApp
	case parent.Kind == "OperatorGroup" && child.Kind == "Namespace":
		return EdgeTargets
	}
	return EdgeOwns
}
