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
	root.AddCommand(newCheckCommand())
	root.AddCommand(newAppsCommand())
	root.AddCommand(newCatalogCommand())
	root.AddCommand(newBundleCommand())
	root.AddCommand(markGraceful(newRunCommand()))
	root.AddCommand(newSyncCommands()...)
	root.AddCommand(newInstallCommand())
	root.AddCommand(newVersionCommand())
	return root
}
