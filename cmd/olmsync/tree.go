package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/inventory"
)

// treeNode is one object of a tree: a Sync, an object of its inventory, or an object
// OLM made for one (an InstallPlan, a CSV, a Deployment).
type treeNode struct {
	kind, namespace, name string
	// note says what is wrong with reading it ("not found"), or nothing.
	note     string
	children []*treeNode
}

// label names the node as flux tree does: Kind/namespace/name, Kind/name when cluster-scoped.
func (n *treeNode) label() string {
	l := n.kind + "/" + n.name
	if n.namespace != "" {
		l = n.kind + "/" + n.namespace + "/" + n.name
	}
	if n.note != "" {
		l += " (" + n.note + ")"
	}
	return l
}

func (n *treeNode) add(c *treeNode) *treeNode {
	n.children = append(n.children, c)
	return c
}

// write draws the tree with the box-drawing branches of flux tree and tree(1).
func (n *treeNode) write(w io.Writer) {
	fmt.Fprintln(w, n.label())
	n.writeChildren(w, "")
}

func (n *treeNode) writeChildren(w io.Writer, prefix string) {
	for i, c := range n.children {
		branch, next := "├── ", "│   "
		if i == len(n.children)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintln(w, prefix+branch+c.label())
		c.writeChildren(w, prefix+next)
	}
}

// walk calls f on n and every node below it.
func (n *treeNode) walk(f func(*treeNode)) {
	f(n)
	for _, c := range n.children {
		c.walk(f)
	}
}

func newTreeCommand() *cobra.Command {
	return newSyncVerbCommand(syncVerb{
		verb: "tree", verbShort: "Print the objects olmsync resources manage as a tree",
		use: "sync NAME", aliases: syncAliases, names: true,
		short: "Print the objects a Sync applied as a tree, with what OLM made of its Subscriptions",
		long: `Print the Sync's inventory (status.inventory: every object it applied) as a tree, as flux
tree kustomization does, and below each Subscription the chain OLM made for it: the
InstallPlan of status.installPlanRef, the CSV of status.installedCSV (status.currentCSV while
none is installed) and the Deployments of the CSV's install strategy. Below a CSV of the
inventory come its Deployments. An object that cannot be read says why: (not found),
(forbidden).`,
		example: `  olmsync tree sync platform
  olmsync tree sync platform -n teams`,
		args: cobra.ExactArgs(1),
		run: func(ctx context.Context, s *syncSession, args []string) error {
			obj, err := s.getSync(ctx, args[0])
			if err != nil {
				return err
			}
			root, err := s.syncTree(ctx, obj)
			if err != nil {
				return err
			}
			root.write(s.out)
			return nil
		},
	})
}

// syncTree reads the objects of obj's inventory and OLM's chain below its Subscriptions.
func (s *syncSession) syncTree(ctx context.Context, obj *olmsyncv1alpha1.Sync) (*treeNode, error) {
	root := &treeNode{kind: olmsyncv1alpha1.SyncKind, namespace: obj.Namespace, name: obj.Name}
	inv, err := inventory.FromStatus(obj.Status.Inventory)
	if err != nil {
		return nil, fmt.Errorf("read the inventory of Sync %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	for _, e := range inv.Entries() {
		node := root.add(&treeNode{kind: e.Kind, namespace: e.Namespace, name: e.Name})
		if e.Group != operatorsv1alpha1.GroupName {
			continue
		}
		key := types.NamespacedName{Namespace: e.Namespace, Name: e.Name}
		switch e.Kind {
		case "Subscription":
			if err := s.subscriptionChain(ctx, node, key); err != nil {
				return nil, err
			}
		case "ClusterServiceVersion":
			if err := s.csvDeployments(ctx, node, key); err != nil {
				return nil, err
			}
		}
	}
	return root, nil
}

// subscriptionChain adds below a Subscription's node the InstallPlan and the CSV OLM made
// for it, and the CSV's Deployments below the CSV: the CSV goes below the InstallPlan
// that installed it when there is one.
func (s *syncSession) subscriptionChain(ctx context.Context, node *treeNode, key types.NamespacedName) error {
	sub := &operatorsv1alpha1.Subscription{}
	if node.note = s.read(ctx, key, sub); node.note != "" {
		return ctx.Err()
	}
	parent := node
	if ref := sub.Status.InstallPlanRef; ref != nil && ref.Name != "" {
		ns := ref.Namespace
		if ns == "" {
			ns = key.Namespace
		}
		ip := node.add(&treeNode{kind: "InstallPlan", namespace: ns, name: ref.Name})
		ip.note = s.read(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, &operatorsv1alpha1.InstallPlan{})
		parent = ip
	}
	csv := sub.Status.InstalledCSV
	if csv == "" {
		csv = sub.Status.CurrentCSV
	}
	if csv == "" {
		return ctx.Err()
	}
	csvNode := parent.add(&treeNode{kind: "ClusterServiceVersion", namespace: key.Namespace, name: csv})
	return s.csvDeployments(ctx, csvNode, types.NamespacedName{Namespace: key.Namespace, Name: csv})
}

// csvDeployments adds below a CSV's node the Deployments of its install strategy.
func (s *syncSession) csvDeployments(ctx context.Context, node *treeNode, key types.NamespacedName) error {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if node.note = s.read(ctx, key, csv); node.note != "" {
		return ctx.Err()
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		dep := node.add(&treeNode{kind: "Deployment", namespace: key.Namespace, name: d.Name})
		dep.note = s.read(ctx, types.NamespacedName{Namespace: key.Namespace, Name: d.Name}, &appsv1.Deployment{})
	}
	return ctx.Err()
}

// read reads an object of the tree, and says in a word or two why it could not:
// a tree shows what it can rather than nothing.
func (s *syncSession) read(ctx context.Context, key types.NamespacedName, obj client.Object) string {
	err := s.client.Get(ctx, key, obj)
	switch {
	case err == nil:
		return ""
	case apierrors.IsNotFound(err):
		return "not found"
	case apierrors.IsForbidden(err):
		return "forbidden"
	default:
		return "unreadable: " + string(apierrors.ReasonForError(err))
	}
}
