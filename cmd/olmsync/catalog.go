package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/olmsync/olmsync/olm/catalog"
)

// catalogFlags are the flags every catalog subcommand shares: where pulled images are kept.
type catalogFlags struct {
	cacheDir string
	insecure bool
}

func (f *catalogFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.cacheDir, "cache-dir", defaultCatalogCache(), "where pulled catalog images are kept by digest (empty: not kept)")
	cmd.PersistentFlags().BoolVar(&f.insecure, "insecure", false, "allow plain HTTP to the image registry")
}

func (f *catalogFlags) load(cmd *cobra.Command, src string) (*catalog.Catalog, error) {
	c, err := catalog.Load(cmd.Context(), src, catalog.LoadOptions{
		Image: catalog.ImageOptions{CacheDir: f.cacheDir, Insecure: f.insecure},
	})
	if err != nil {
		return nil, err // unreadable: exit 2
	}
	return c, nil
}

func defaultCatalogCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "olmsync", "catalogs")
}

func newCatalogCommand() *cobra.Command {
	flags := &catalogFlags{}
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "Validate, graph and render OLM catalogs",
		Long: `Read an OLM catalog — SRC is a file-based catalog (file or folder), a package-manifest
folder, a bundle directory or folder of bundles, a ConfigMap catalog manifest, a catalog
image in a registry (quay.io/org/catalog:tag) or in an OCI layout (oci:DIR[:NAME]) — and
validate it, show a package's upgrade graph, or render it as FBC.`,
	}
	flags.register(cmd)
	cmd.AddCommand(newCatalogValidateCommand(flags), newCatalogGraphCommand(flags), newCatalogRenderCommand(flags))
	return cmd
}

func newCatalogValidateCommand(flags *catalogFlags) *cobra.Command {
	var output string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "validate SRC",
		Short: "Check a catalog with OLM's rules; exit 0 valid, 1 defects found, 2 unreadable",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.load(cmd, args[0])
			if err != nil {
				return err
			}
			report := catalog.NewReport(c)
			if err := catalog.WriteReport(cmd.OutOrStdout(), report, output, verbose); err != nil {
				return err
			}
			if !report.Valid {
				return &findingsError{fmt.Sprintf("%d catalog errors", report.Errors)}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", catalog.ReportText, "output format: text or json")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also show notes (edges OLM tolerates)")
	return cmd
}

func newCatalogGraphCommand(flags *catalogFlags) *cobra.Command {
	var pkg, channel, output string
	cmd := &cobra.Command{
		Use:   "graph SRC --package P [--channel C]",
		Short: "Show a package's upgrade graph: replaces, skips and skipRange edges, heads marked",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.load(cmd, args[0])
			if err != nil {
				return err
			}
			g, err := catalog.BuildGraph(c, pkg, channel)
			if err != nil {
				return err
			}
			return catalog.WriteGraph(cmd.OutOrStdout(), g, output)
		},
	}
	cmd.Flags().StringVar(&pkg, "package", "", "the package (required)")
	cmd.Flags().StringVar(&channel, "channel", "", "one channel (default: every channel)")
	cmd.Flags().StringVarP(&output, "output", "o", catalog.GraphText, "output format: text, json, dot or mermaid")
	_ = cmd.MarkFlagRequired("package")
	return cmd
}

func newCatalogRenderCommand(flags *catalogFlags) *cobra.Command {
	var objects bool
	cmd := &cobra.Command{
		Use:   "render SRC",
		Short: "Write a catalog as FBC JSON, one object per line (like opm render)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.load(cmd, args[0])
			if err != nil {
				return err
			}
			return catalog.WriteFBC(cmd.OutOrStdout(), c, catalog.RenderOptions{BundleObjects: objects})
		},
	}
	cmd.Flags().BoolVar(&objects, "bundle-objects", false, "add an olm.bundle.object property per manifest of bundles that carry them")
	return cmd
}
