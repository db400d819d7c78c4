//go:build !olmsync_light

package main

import (
	"context"

	"github.com/spf13/cobra"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/tree"
)

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
			root.Write(s.out)
			return nil
		},
	})
}

// syncTree reads the objects of obj's inventory and OLM's chain below its Subscriptions.
func (s *syncSession) syncTree(ctx context.Context, obj *olmsyncv1alpha1.Sync) (*tree.Node, error) {
	return tree.Build(ctx, s.client, obj, tree.Options{})
}
