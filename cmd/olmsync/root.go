package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// Exit codes shared by every subcommand, the ones CI tools expect from a linter: 0 when
// nothing is wrong, 1 for findings, 2 for bad usage or input that could not be read.
const (
	exitFindings = 1
	exitUsage    = 2
)

// findingsError is returned by a command that ran to completion but found problems
// (policy violations, drift): the process exits 1 without an extra error line.
type findingsError struct{ msg string }

func (e *findingsError) Error() string { return e.msg }

func exitCode(err error) int {
	var f *findingsError
	if errors.As(err, &f) {
		return exitFindings
	}
	return exitUsage
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "olmsync",
		Short: "GitOps for operators installed through OLM",
		Long: `olmsync renders the apps of a GitOps repository with kustomize, checks their OLM objects
(Subscriptions, OperatorGroups, CatalogSources, CSVs, InstallPlans) against the operator
placement rules, and syncs them into a cluster through an embedded OLM lifecycle controller.`,
		SilenceUsage: true,
		// main prints errors itself, so that a findings exit (exit code 1) prints nothing
		// beyond the command's own report.
		SilenceErrors: true,
		// --version, as every CLI has; `olmsync version` says more.
		Version: currentBuildInfo().Version,
	}
	root.SetVersionTemplate("olmsync {{.Version}}\n")
	profiles.register(root)
	root.AddCommand(newCheckCommand())
	root.AddCommand(newAppsCommand())
	root.AddCommand(newCatalogCommand())
	root.AddCommand(newBundleCommand())
	root.AddCommand(clusterCommands()...)
	root.AddCommand(newVersionCommand())
	return root
}

// clusterVerbs are the commands that talk to a cluster — the controllers, installing,
// and the Flux-style verbs on Syncs —, each with its one-line help. The full build
// (olmsync-cluster) has them; the light build (olmsync, built with the olmsync_light tag:
// what `olmsync check` runs, linking no Kubernetes client, no controller, no Helm)
// hands them to the full build. TestClusterVerbsAreTheFullBuilds holds the two together.
var clusterVerbs = []struct{ use, short string }{
	{"create", "Create or update olmsync resources"},
	{"diff", "Show what a reconcile of olmsync resources would change"},
	{"events", "Show the Kubernetes Events of Syncs and of the objects they manage"},
	{"export", "Print olmsync resources as YAML to apply elsewhere"},
	{"get", "Display olmsync resources"},
	{"install", "Install olmsync in a cluster from the Helm chart embedded in this binary, or print its manifests (--export)"},
	{"reconcile", "Reconcile olmsync resources now"},
	{"resume", "Resume the reconciliation of olmsync resources"},
	{"run", "Run the controllers: Syncs from Git through the placement rules into the cluster, and the embedded OLM"},
	{"suspend", "Suspend the reconciliation of olmsync resources"},
	{"tree", "Print the objects olmsync resources manage as a tree"},
}
