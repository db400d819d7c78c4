package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/check/preview"
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

type checkFlags struct {
	sourceFlags
	limitFlags
	base        string
	failOn      string
	output      string
	format      string // --format, the deprecated spelling of --output
	outputFile  string
	pathPrefix  string
	groupBy     string
	policies    []string
	listObjects bool
	// the OLM preview
	catalogs      []string
	clusterStates []string
	kubeconfig    string
	contexts      []string
	globalCatalog string
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
	fl.StringVarP(&f.output, "output", "o", string(report.FormatText), "report format: text, json, sarif, junit, github or markdown")
	fl.StringVar(&f.format, "format", "", "the report format (deprecated: use -o/--output, as every other command does)")
	_ = fl.MarkDeprecated("format", "use -o/--output for the format and --output-file for the file")
	fl.StringVar(&f.outputFile, "output-file", "", "write the report to this file instead of standard output")
	fl.StringVar(&f.pathPrefix, "path-prefix", "", "put this folder in front of every path in SARIF, GitHub annotations and Markdown links (default: the checked folder's path inside its git repository, so a GitOps folder of a monorepo annotates the right files)")
	fl.StringVar(&f.groupBy, "group-by", "", "group text violations and JUnit suites by file, app or rule")
	fl.StringArrayVar(&f.policies, "policy", nil, "a folder of your own Rego rules (deny/warn); may be repeated")
	fl.StringArrayVar(&f.catalogs, "catalog", nil, "preview what OLM does with each Subscription, resolving against this catalog: NAME[/NAMESPACE]=SRC, SRC a folder, a path in the repository or an image reference (NAMESPACE: the marketplace namespace); may be repeated")
	fl.StringArrayVar(&f.clusterStates, "cluster-state", nil, "a folder of YAML objects (Namespaces, OperatorGroups, CSVs, Subscriptions, CatalogSources) the OLM preview takes as what the cluster has, [CLUSTER=]DIR; without it the cluster is empty; may be repeated")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "read the cluster state for the OLM preview from a live cluster, read-only (list calls only): this kubeconfig's current context, or the contexts --context names; default with --context: $KUBECONFIG, else ~/.kube/config")
	fl.StringArrayVar(&f.contexts, "context", nil, "the kubeconfig context whose cluster the OLM preview reads (read-only), [CLUSTER=]CONTEXT; for one cluster of the repository, or every cluster without CLUSTER=; may be repeated")
	fl.StringVar(&f.globalCatalog, "global-catalog-namespace", "", "the namespace whose CatalogSources every namespace sees, for the OLM preview and the placement rules alike (as olmsync run's flag; default: what the cluster read with --kubeconfig/--context runs with, else olmsync.yaml's policy.marketplaceNamespace, else "+policy.DefaultMarketplaceNamespace+")")
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
	format, err := f.reportFormat()
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
	// What the builds of one render may read, aliases expanded: a base and a head are
	// held at once, so each gets half.
	opts.Render.NodeBudget, opts.Render.NodeBudgetFrom = render.NodeBudgetFor(ceiling.Bytes), "the memory ceiling of "+ceiling.String()
	if f.base != "" {
		opts.Render.NodeBudget /= 2
	}
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

	previewOpts, err := f.previewOptions(cmd.Context())
	if err != nil {
		return err
	}
	opts.GlobalCatalogNamespaces = f.globalCatalogNamespaces(previewOpts.ClusterStates)

	src := f.source(args)
	// The base is checked first: the preview of the head takes what the base installs as
	// what the cluster runs, so that it can say what the change does.
	var base *check.Result
	if f.base != "" {
		// Most apps are the same at the base and the head: each is built once.
		if opts.Render.Cache == nil {
			opts.Render.Cache = render.NewCache()
		}
		opts.PolicyCache = policy.NewFindingsCache()
		opts.PolicyCompiled = policy.NewCompileCache()
		baseOpts := opts
		baseOpts.Stages = []check.Stage{preview.New(previewOpts)}
		if base, err = checkRevision(cmd, src.At(f.base), baseOpts); err != nil {
			return fmt.Errorf("base revision: %w", err)
		}
		previewOpts.Base = previewSection(base)
	}
	opts.Stages = []check.Stage{preview.New(previewOpts)}
	head, err := checkRevision(cmd, src, opts)
	if err != nil {
		return err
	}
	rep, err := check.Report(head, base, check.ReportOptions{
		Tool:        report.Tool{Name: "olmsync", Version: currentBuildInfo().Version},
		FailOn:      failOn,
		ListObjects: f.listObjects || format == report.FormatJUnit,
	})
	if err != nil {
		return err
	}
	prefix := f.pathPrefix
	if !cmd.Flags().Changed("path-prefix") && head.Tree != nil {
		prefix = head.Tree.RepoPath
	}
	if err := writeReport(cmd, f.outputFile, rep, format, report.Options{GroupBy: groupBy, PathPrefix: prefix}); err != nil {
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

// reportFormat reads -o/--output (or the deprecated --format). A value that reads like a
// file name is what -o meant before it named the format: the error says so.
func (f *checkFlags) reportFormat() (report.Format, error) {
	name := f.output
	if f.format != "" {
		if f.output != string(report.FormatText) && f.output != f.format {
			return "", fmt.Errorf("--format %s and -o %s disagree; give only -o", f.format, f.output)
		}
		name = f.format
	}
	format, err := report.ParseFormat(name)
	if err != nil && strings.ContainsAny(name, "./") {
		return "", fmt.Errorf("%w (-o is the format, as in kubectl and conftest; write the report to a file with --output-file %s)", err, name)
	}
	return format, err
}

// previewOptions turns the preview's flags into its options. The live clusters
// (--kubeconfig, --context) are read here, once: the base and the head of a pull request
// are previewed against the same state.
func (f *checkFlags) previewOptions(ctx context.Context) (preview.Options, error) {
	var opts preview.Options
	for _, c := range f.catalogs {
		spec, err := preview.ParseCatalogFlag(c)
		if err != nil {
			return opts, err
		}
		opts.Catalogs = append(opts.Catalogs, spec)
	}
	// Every cluster has one state at most; this is checked before a live cluster is read.
	given := map[string]bool{}
	claim := func(flag, value, cluster string) error {
		if !given[cluster] {
			given[cluster] = true
			return nil
		}
		if cluster == "" {
			return fmt.Errorf("%s %s: a second state for every cluster; give one of --cluster-state DIR and --kubeconfig/--context without CLUSTER=", flag, value)
		}
		return fmt.Errorf("%s %s: a second state for cluster %q", flag, value, cluster)
	}
	live := f.liveClusters()
	for _, cs := range f.clusterStates {
		cluster, _ := splitCluster(cs)
		if err := claim("--cluster-state", cs, cluster); err != nil {
			return opts, err
		}
	}
	for _, l := range live {
		if err := claim(l.flag, l.value, l.cluster); err != nil {
			return opts, err
		}
	}
	if len(given) > 0 {
		opts.ClusterStates = map[string]*preview.ClusterState{}
	}
	for _, cs := range f.clusterStates {
		cluster, dir := splitCluster(cs)
		state, err := preview.LoadClusterState(dir)
		if err != nil {
			return opts, fmt.Errorf("--cluster-state: %w", err)
		}
		opts.ClusterStates[cluster] = state
	}
	for _, l := range live {
		state, err := readLive(ctx, l.kubeconfig)
		if err != nil {
			return opts, fmt.Errorf("%s: %w", l.flag, err)
		}
		opts.ClusterStates[l.cluster] = state
	}
	return opts, nil
}

// globalCatalogNamespaces are the clusters' global catalog namespaces: the flag's for
// every cluster, else what each live cluster runs with; a cluster with neither takes
// olmsync.yaml's.
func (f *checkFlags) globalCatalogNamespaces(states map[string]*preview.ClusterState) map[string]string {
	if f.globalCatalog != "" {
		return map[string]string{"": f.globalCatalog}
	}
	out := map[string]string{}
	for cluster, st := range states {
		if st.GlobalCatalogNamespace != "" {
			out[cluster] = st.GlobalCatalogNamespace
		}
	}
	return out
}

// liveCluster is a cluster of the repository whose state is read from a live cluster.
type liveCluster struct {
	cluster     string
	kubeconfig  preview.Kubeconfig
	flag, value string // for errors
}

// liveClusters are the clusters --context names, each read through --kubeconfig (or the
// default kubeconfig files); without --context, --kubeconfig's current context is the
// state of every cluster.
func (f *checkFlags) liveClusters() []liveCluster {
	if len(f.contexts) == 0 {
		if f.kubeconfig == "" {
			return nil
		}
		return []liveCluster{{kubeconfig: preview.Kubeconfig{Path: f.kubeconfig}, flag: "--kubeconfig", value: f.kubeconfig}}
	}
	out := make([]liveCluster, 0, len(f.contexts))
	for _, c := range f.contexts {
		cluster, name := splitCluster(c)
		out = append(out, liveCluster{cluster: cluster, kubeconfig: preview.Kubeconfig{Path: f.kubeconfig, Context: name}, flag: "--context", value: c})
	}
	return out
}

// splitCluster splits a [CLUSTER=]VALUE flag.
func splitCluster(s string) (cluster, value string) {
	if name, rest, ok := strings.Cut(s, "="); ok {
		return name, rest
	}
	return "", s
}

// previewSection is the OLM preview of a checked revision, or nil.
func previewSection(res *check.Result) *preview.Section {
	for _, s := range res.Sections {
		if p, ok := s.(*preview.Section); ok {
			return p
		}
	}
	return nil
}

// checkRevision opens one revision and checks it.
func checkRevision(cmd *cobra.Command, src check.Source, opts check.Options) (*check.Result, error) {
	tree, err := src.Open(cmd.Context())
	if err != nil {
		return nil, err
	}
	return check.Run(cmd.Context(), tree, opts)
}

func writeReport(cmd *cobra.Command, output string, rep *report.Report, format report.Format, opts report.Options) error {
	opts.SourceURL = githubSourceURL(rep)
	if output == "" {
		opts.Color = colorful(cmd.OutOrStdout())
		return report.Write(cmd.OutOrStdout(), rep, format, opts)
	}
	file, err := os.Create(output)
	if err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	err = report.Write(file, rep, format, opts)
	if cerr := file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write the report: %w", cerr)
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
