package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/olmsync/olmsync/olm/catalog"
)

func newBundleCommand() *cobra.Command {
	flags := &catalogFlags{}
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Inspect OLM bundles",
		Long: `Read an OLM bundle — a bundle image in a registry (quay.io/org/bundle:tag, or by
digest) or a bundle directory (manifests/ and metadata/) — and say what it brings.`,
	}
	flags.register(cmd)
	cmd.AddCommand(newBundleInspectCommand(flags))
	return cmd
}

func newBundleInspectCommand(flags *catalogFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "inspect REF",
		Short: "Show what a bundle brings: its CSV, owned and required CRDs, install modes, permissions (cluster-wide ones called out), dependencies, images, webhooks and API services",
		Long: `Show what a bundle brings to a cluster: its CSV, the CRDs it owns (served versions, the
storage version marked *) and those it requires, the install modes it supports, the RBAC rules
it asks for (cluster-wide ones called out), its dependencies, the images it runs, and the
webhooks (kinds, rules, failure policy; cluster-wide ones called out) and aggregated API
services OLM registers for it with the API server. REF is a
bundle directory or a bundle image; an image is pulled over HTTPS with the credentials of
the docker config (--insecure allows plain HTTP) and kept by digest in --cache-dir. A bundle
OLM would refuse (no CSV, a kind a bundle may not carry, no annotations) is an error naming
what is wrong.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref := args[0]
			var u *catalog.UnpackedBundle
			var err error
			if fi, statErr := os.Stat(ref); statErr == nil && fi.IsDir() {
				u, err = catalog.LoadBundleDir(ref)
			} else {
				u, err = catalog.LoadBundleImage(cmd.Context(), ref, catalog.ImageOptions{CacheDir: flags.cacheDir, Insecure: flags.insecure})
			}
			if err != nil {
				return err // unreadable, or not a bundle OLM installs: exit 2
			}
			if u == nil || u.Bundle == nil {
				return fmt.Errorf("%s: no bundle", ref)
			}
			s := u.Bundle.Summary()
			s.Source = &u.Source
			return catalog.WriteBundleSummary(cmd.OutOrStdout(), s, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", catalog.ReportText, "output format: text or json")
	return cmd
}
