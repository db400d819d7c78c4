package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/report"
)

// sourceFlags are the flags that name a repository and how to read it, shared by check
// and apps.
type sourceFlags struct {
	ref      string
	cacheDir string
	repoURLs []string
}

func (f *sourceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.repoURLs, "repo-url", nil, "a URL Argo CD Applications name this repository by, besides its git remote origin (olmsync.yaml's repoURLs win over both); may be repeated")
	cmd.Flags().StringVar(&f.ref, "ref", "", "check this committed revision (branch, tag, commit; HEAD~1 for a folder) instead of the folder as it is on disk, or the remote's default branch")
	cmd.Flags().StringVar(&f.cacheDir, "cache-dir", "", "where repositories given by URL are fetched to (default: the user's cache folder, olmsync/git)")
}

func (f *sourceFlags) source(args []string) check.Source {
	s := check.Source{Ref: f.ref, CacheDir: f.cacheDir}
	if len(args) > 0 {
		s.Location = args[0]
	}
	return s
}

// previewFlags are what the command line names for the OLM preview; the full build reads
// them as preview.Inputs (preview_full.go), the light build hands a check that names any
// of them but --global-catalog-namespace to the full build (preview_light.go).
type previewFlags struct {
	Catalogs               []string
	ClusterStates          []string
	Kubeconfig             string
	Contexts               []string
	GlobalCatalogNamespace string
}

type checkFlags struct {
	sourceFlags
	limitFlags
	base        string
	failOn      string
	outputs     []string
	format      string // --format, the deprecated spelling of --output
	outputFile  string
	pathPrefix  string
	groupBy     string
	policies    []string
	listObjects bool
	preview     previewFlags
	// what kustomize may do beyond reading the repository
	allowRemoteBases       bool
	renderCache            string
	enableExecPlugins      bool
	enableContainerPlugins bool
	enableHelm             bool
	helmCommand            string
}

func newCheckCommand() *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check [PATH|URL]",
		Short: "Render a GitOps repository and check its OLM objects against the operator placement rules",
		Long: `Render every app of a GitOps repository with kustomize (in-process) and check the OLM objects
(Subscriptions, OperatorGroups, CatalogSources, CSVs, InstallPlans) against the operator
placement rules OP001-OP016 and your own Rego rules, cluster by cluster.

PATH is a folder (default: the current one), read as it is on disk, or at --ref from its git
history. URL is a repository (https, ssh, file) fetched at --ref into a cache.

Exit codes: 0 no error that counts, 1 violations, 2 bad usage or input that could not be
read, rendered or evaluated (the report still lists everything else that was checked).`,
		Example: `  olmsync check examples/gitops
  olmsync check --base origin/main --fail-on new -o github
  olmsync check --base origin/main -o github -o sarif=olmsync.sarif -o markdown=olmsync.md
  olmsync check https://github.com/org/apps --ref v1.2.0 -o sarif --output-file olmsync.sarif`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, f, args)
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.base, "base", "", "also check this revision (a pull request's base) and mark each violation new or pre-existing; list the OLM changes")
	fl.StringVar(&f.failOn, "fail-on", string(report.FailOnAll), "which errors fail the check: all, or only those new against --base (without --base every violation is new)")
	fl.StringArrayVarP(&f.outputs, "output", "o", []string{string(report.FormatText)}, "a report to write, FORMAT to standard output or FORMAT=FILE, FORMAT one of text, json, sarif, junit, github, markdown; may be repeated: every report comes from the same run (-o github -o sarif=olmsync.sarif -o markdown=olmsync.md)")
	fl.StringVar(&f.format, "format", "", "the report format (deprecated: use -o/--output, as every other command does)")
	_ = fl.MarkDeprecated("format", "use -o/--output for the format and --output-file for the file")
	fl.StringVar(&f.outputFile, "output-file", "", "write the report of the one -o without a file to this file instead of standard output")
	fl.StringVar(&f.pathPrefix, "path-prefix", "", "put this folder in front of every path in SARIF, GitHub annotations and Markdown links (default: the checked folder's path inside its git repository, so a GitOps folder of a monorepo annotates the right files)")
	fl.StringVar(&f.groupBy, "group-by", "", "group text violations and JUnit suites by file, app or rule")
	fl.StringArrayVar(&f.policies, "policy", nil, "a folder of your own Rego rules (deny/warn); may be repeated")
	fl.StringArrayVar(&f.preview.Catalogs, "catalog", nil, "preview what OLM does with each Subscription, resolving against this catalog: NAME[/NAMESPACE]=SRC, SRC a folder, a path in the repository or an image reference (NAMESPACE: the marketplace namespace); may be repeated")
	fl.StringArrayVar(&f.preview.ClusterStates, "cluster-state", nil, "a folder of YAML objects (Namespaces, OperatorGroups, CSVs, Subscriptions, CatalogSources) the OLM preview takes as what the cluster has, [CLUSTER=]DIR; without it the cluster is empty; may be repeated")
	fl.StringVar(&f.preview.Kubeconfig, "kubeconfig", "", "read the cluster state for the OLM preview from a live cluster, read-only (list calls only): this kubeconfig's current context, or the contexts --context names; default with --context: $KUBECONFIG, else ~/.kube/config")
	fl.StringArrayVar(&f.preview.Contexts, "context", nil, "the kubeconfig context whose cluster the OLM preview reads (read-only), [CLUSTER=]CONTEXT; for one cluster of the repository, or every cluster without CLUSTER=; may be repeated")
	fl.StringVar(&f.preview.GlobalCatalogNamespace, "global-catalog-namespace", "", "the namespace whose CatalogSources every namespace sees, for the OLM preview and the placement rules alike (as olmsync run's flag; default: what the cluster read with --kubeconfig/--context runs with, else olmsync.yaml's policy.marketplaceNamespace, else "+policy.DefaultMarketplaceNamespace+")")
	fl.BoolVar(&f.listObjects, "list-objects", false, "list every checked object in the report (JUnit always lists them)")
	fl.BoolVar(&f.allowRemoteBases, "allow-remote-bases", false, "let kustomizations use remote bases and files (network access)")
	fl.StringVar(&f.renderCache, "render-cache", "", "keep each app's build in this folder, keyed by the digest of its inputs and olmsync's version, so the next run (a CI cache) builds only the apps whose inputs changed; the folder must be as trusted as the repository")
	fl.BoolVar(&f.enableExecPlugins, "enable-exec-plugins", false, "run kustomize exec plugins and exec KRM functions (runs code from the repository)")
	fl.BoolVar(&f.enableContainerPlugins, "enable-container-plugins", false, "run kustomize container KRM functions")
	fl.BoolVar(&f.enableHelm, "enable-helm", false, "let kustomizations inflate Helm charts (helmCharts)")
	fl.StringVar(&f.helmCommand, "helm-command", "helm", "the helm binary --enable-helm runs")
	f.registerTimeout(fl)
	f.registerMemory(fl)
	return cmd
}

func runCheck(cmd *cobra.Command, f *checkFlags, args []string) (err error) {
	if err := handOff(cmd); err != nil {
		return err
	}
	ceiling, done, err := f.guardMemory(cmd)
	if err != nil {
		return err
	}
	defer func() { err = done(err) }()
	failOn, err := report.ParseFailOn(f.failOn)
	if err != nil {
		return err
	}
	outputs, err := f.reportOutputs(cmd)
	if err != nil {
		return err
	}
	groupBy, err := report.ParseGroupBy(f.groupBy)
	if err != nil {
		return err
	}
	opts := check.Options{RepoURLs: f.repoURLs, PolicyTimeout: f.policyTimeout,
		// Users' rules run in a child process with half the ceiling (at least 256Mi; the
		// sandbox's default without one): one that exhausts it is a problem naming it,
		// not the end of the check.
		PolicySandbox: &policy.Sandbox{MemoryLimit: sandboxMemory(ceiling)}}
	opts.Render.AllowRemoteBases = f.allowRemoteBases
	opts.Render.EnableExecPlugins = f.enableExecPlugins
	opts.Render.EnableContainerPlugins = f.enableContainerPlugins
	opts.Render.EnableHelm = f.enableHelm
	opts.Render.HelmCommand = f.helmCommand
	// What the builds of one render may read, aliases expanded (check.Change halves it for
	// a base and a head).
	opts.Render.NodeBudget, opts.Render.NodeBudgetFrom = render.NodeBudgetFor(ceiling.Bytes), "the memory ceiling of "+ceiling.String()
	if f.renderCache != "" {
		c, err := render.NewDiskCache(f.renderCache, buildIdentity())
		if err != nil {
			return err
		}
		opts.Render.Cache = c
	}
	for _, dir := range f.policies {
		opts.Policies = append(opts.Policies, policy.Dir(dir))
	}

	stages, err := f.preview.stages(cmd.Context(), &opts)
	if err != nil {
		return err
	}
	head, base, err := check.Change(cmd.Context(), f.source(args), f.base, opts, stages)
	if err != nil {
		return handOffPreview(err)
	}
	rep, err := check.Report(head, base, check.ReportOptions{
		Tool:        report.Tool{Name: "olmsync", Version: currentBuildInfo().Version},
		FailOn:      failOn,
		ListObjects: f.listObjects || report.HasFormat(outputs, report.FormatJUnit),
	})
	if err != nil {
		return err
	}
	prefix := f.pathPrefix
	if !cmd.Flags().Changed("path-prefix") && head.Tree != nil {
		prefix = head.Tree.RepoPath
	}
	if err := writeReports(cmd, outputs, rep, f.listObjects, report.Options{GroupBy: groupBy, PathPrefix: prefix}); err != nil {
		return err
	}
	switch report.ExitCode(rep, failOn) {
	case report.ExitViolations:
		return &findingsError{fmt.Sprintf("%d errors", rep.Summary.Errors)}
	case report.ExitIncomplete:
		n := countHeadProblems(rep)
		what := "inputs"
		if n == 1 {
			what = "input"
		}
		return fmt.Errorf("check incomplete: %d %s could not be read, rendered or evaluated (listed in the report)", n, what)
	}
	return nil
}

// reportOutputs reads -o/--output (or the deprecated --format) and --output-file.
func (f *checkFlags) reportOutputs(cmd *cobra.Command) ([]report.Output, error) {
	values := f.outputs
	if f.format != "" {
		if cmd.Flags().Changed("output") && (len(f.outputs) != 1 || f.outputs[0] != f.format) {
			return nil, fmt.Errorf("--format %s and -o %s disagree; give only -o", f.format, strings.Join(f.outputs, " -o "))
		}
		values = []string{f.format}
	}
	return report.ParseOutputs(values, f.outputFile)
}

// writeReports writes the report in every output. The objects are listed in each only when
// asked for (--list-objects) or for JUnit, which makes a test case of each. An output that
// cannot be written does not keep the others from being written.
func writeReports(cmd *cobra.Command, outputs []report.Output, rep *report.Report, listObjects bool, opts report.Options) error {
	opts.SourceURL = githubSourceURL(rep)
	var errs []error
	for _, o := range outputs {
		r := rep
		if !listObjects && o.Format != report.FormatJUnit {
			r = report.WithoutObjects(rep)
		}
		if err := writeReport(cmd, o, r, opts); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func writeReport(cmd *cobra.Command, o report.Output, rep *report.Report, opts report.Options) error {
	if o.Path == "" {
		opts.Color = colorful(cmd.OutOrStdout())
		return report.Write(cmd.OutOrStdout(), rep, o.Format, opts)
	}
	file, err := os.Create(o.Path)
	if err != nil {
		return fmt.Errorf("write the %s report: %w", o.Format, err)
	}
	err = report.Write(file, rep, o.Format, opts)
	if cerr := file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write the %s report: %w", o.Format, cerr)
	}
	return err
}

// colorful: colours only for a terminal, and never when NO_COLOR is set (no-color.org).
func colorful(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd()))
}

// githubSourceURL links the Markdown report's locations to the checked commit when the
// check runs in GitHub Actions.
func githubSourceURL(rep *report.Report) string {
	server, repo := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY")
	if server == "" || repo == "" || rep.Revision.Commit == "" {
		return ""
	}
	return server + "/" + repo + "/blob/" + rep.Revision.Commit + "/"
}

func countHeadProblems(rep *report.Report) int {
	n := 0
	for _, p := range rep.Problems {
		if !p.Base {
			n++
		}
	}
	return n
}

// buildIdentity names this build for the render cache: a released version and its commit,
// or, for a development build (whose code may differ at the same version), the digest of
// the executable itself, so that no build ever takes another's entries.
func buildIdentity() string {
	b := currentBuildInfo()
	id := b.Version + "+" + b.Commit
	if b.Version != "devel" && b.Commit != "" && !strings.HasSuffix(b.Version, "-dirty") {
		return id
	}
	exe, err := os.Executable()
	if err == nil {
		if f, err := os.Open(exe); err == nil {
			defer f.Close()
			h := sha256.New()
			if _, err := io.Copy(h, f); err == nil {
				return id + "+" + hex.EncodeToString(h.Sum(nil))
			}
		}
	}
	return id + "+" + strconv.FormatInt(time.Now().UnixNano(), 10) // unknown: share nothing
}
