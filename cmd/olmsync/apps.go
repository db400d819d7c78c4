package main

import (
	"github.com/spf13/cobra"

	"github.com/olmsync/olmsync/check"
)

func newAppsCommand() *cobra.Command {
	f := &sourceFlags{}
	var output string
	cmd := &cobra.Command{
		Use:   "apps [PATH|URL]",
		Short: "List the apps olmsync finds in a repository, and why each is an app",
		Long: `List the apps of a GitOps repository the way olmsync check finds them: the apps of
olmsync.yaml, else the Argo CD Applications in the repository, else every kustomization that
no other kustomization uses. Each app shows its cluster, folder, destination namespace, whether
it is the cluster-scope app and why, and the file and line that make it an app.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tree, err := f.source(args).Open(cmd.Context())
			if err != nil {
				return err
			}
			d, err := check.Apps(cmd.Context(), tree, check.Options{RepoURLs: f.repoURLs})
			if err != nil {
				return err
			}
			return check.WriteApps(cmd.OutOrStdout(), d, output)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", check.AppsText, "output format: text or json")
	return cmd
}
