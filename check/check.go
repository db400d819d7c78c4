package check

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// Options say how to check a revision. The zero value checks with the built-in rules and
// kustomize's safe defaults.
type Options struct {
	// Render says what kustomize may do beyond reading the repository (remote bases,
	// plugins, Helm); everything is off in the zero value.
	Render render.Options
	// Policies are folders of users' rules given by the caller (`--policy DIR`), evaluated
	// with the built-in rules and the folders olmsync.yaml lists (policy.rules).
	Policies []policy.PolicySource
	// RuleFolders are further folders of users' rules in the repository itself (a Sync's
	// spec.policy.rules), relative to its root and read from the tree like the folders
	// olmsync.yaml lists.
	RuleFolders []string
	// Stages run after the placement rules, in order (the OLM preview is one).
	Stages []Stage
	// RepoURLs are URLs the repository is known by besides its git remote
	// (`--repo-url`), for telling which Argo CD Applications deploy it; olmsync.yaml's
	// repoURLs, when it has any, win over both.
	RepoURLs []string
	// Deployer names what deploys the repository when the check is a reconciler's (a
	// Sync): its kustomization roots are then apps even where the repository has no
	// entry point of its own, and the cluster it deploys to (Cluster) is one the path
	// conventions may name. Empty for `olmsync check`.
	Deployer string
	// Cluster is the cluster the Deployer deploys to ("" for the default cluster).
	Cluster string
	// Now is the time waiver expiry is judged at; time.Now when nil.
	Now func() time.Time
	// PolicyCache, when set, keeps each cluster's findings by the digest of the rules and
	// its input: with Render.Cache, what lets a pull request's base and head share the
	// work on everything the change leaves alone.
	PolicyCache *policy.FindingsCache
	// PolicyCompiled, when set, keeps the rules compiled by the digest of their sources:
	// checks of the same rules (the reconciler's of every Sync and revision, a pull
	// request's base and head) compile them once.
	PolicyCompiled *policy.CompileCache
	// PolicyTimeout bounds each evaluation of the rules over one cluster (the built-in
	// rules together, each package of users' rules on its own); zero means
	// policy.DefaultTimeout. A user's rule that runs past it is a problem naming the rule
	// and its file (`--policy-timeout`).
	PolicyTimeout time.Duration
	// PolicySandbox, when set, evaluates the users' rules in a child process whose memory
	// is bounded (policy.Sandbox): a rule that exhausts memory stops it, not the caller.
	PolicySandbox *policy.Sandbox
	// GlobalCatalogNamespaces are the global catalog namespaces of the clusters — whose
	// CatalogSources every namespace sees — by cluster name, the entry "" for every cluster
	// without one of its own (`--global-catalog-namespace`, or read from a live cluster).
	// Each wins over olmsync.yaml's policy.marketplaceNamespace, for the placement rules and
	// the OLM preview alike: it is one setting (docs/ci.md).
	GlobalCatalogNamespaces map[string]string
}

// discoverOptions says what discovery cannot read from the files: the URLs the
// repository is known by (its remote, fetched-from URL, and --repo-url) and the checked
// folder's place in it.
func discoverOptions(tree *sources.Tree, opts *Options) render.DiscoverOptions {
	d := render.DiscoverOptions{RepoPath: tree.RepoPath}
	var from []string
	if tree.RepoURL != "" {
		d.RepoURLs = append(d.RepoURLs, tree.RepoURL)
		from = append(from, "the git remote")
	}
	if len(opts.RepoURLs) > 0 {
		d.RepoURLs = append(d.RepoURLs, opts.RepoURLs...)
		from = append(from, "--repo-url")
	}
	d.RepoURLsFrom = strings.Join(from, " and ")
	if opts.Deployer != "" {
		d.RootsAreApps = true
		d.KnownClusters, d.KnownClustersFrom = []string{opts.Cluster}, opts.Deployer
	}
	return d
}

// Stage is a step of the check after the placement rules. It reads what was rendered and
// checked, may add findings to the Result (Violations, with their Rules), and returns the
// Section it adds to the report, or nil. Waivers are applied after the last stage, to
// every stage's findings alike: a stage adds its violations unwaived. A stage must not change the rendered objects:
// the reconciler applies them.
type Stage interface {
	// Name names the stage in problems ("olm-preview").
	Name() string
	Run(ctx context.Context, res *Result) (Section, error)
}

// Section is what a stage adds to the report of the checked revision: new top-level
// lists, counts. AddTo runs before the report is completed.
type Section interface {
	AddTo(r *report.Report)
}

// Result is one checked revision.
type Result struct {
	// Revision names what was checked, as the report shows it.
	Revision report.Revision
	// Tree is the revision's content, for stages that read more of it (the OLM preview
	// reads catalogs kept in the repository).
	Tree *sources.Tree
	// Render is every app with its objects or its error; nil when olmsync.yaml could not
	// be read, since nothing can be found without it.
	Render *render.Result
	// Inputs are the policy inputs, one per cluster, completed (policy.Input.Complete):
	// every object of every app that rendered, with the namespace it lands in and its
	// scope. Apps that failed are left out.
	Inputs []policy.Input
	// Rules is the catalog of every rule evaluated (built-in, users', waiver rules and the
	// stages').
	Rules []policy.Rule
	// Violations are every rule's findings, waived ones included. While the stages run
	// they are not waived yet: Run applies the waivers after the last stage.
	Violations []policy.Violation
	// Problems are inputs that could not be read, rendered or evaluated: a broken
	// olmsync.yaml, an app that failed to render, an app rendered without a generator
	// whose plugin is off, an Application whose path is missing, a user rule with a Rego
	// error, a stage that failed. Any problem makes the check incomplete.
	Problems []report.Problem
	// Warnings do not stop the check: kustomize's deprecations, Applications olmsync does
	// not render.
	Warnings []report.Warning
	// Sections are what the stages add to the report, in stage order.
	Sections []Section
}

// Complete reports whether everything in the revision was read, rendered and evaluated.
// What is absent (an OperatorGroup a Subscription needs) cannot be trusted otherwise, and
// the reconciler must not apply or prune on an incomplete check.
func (r *Result) Complete() bool { return len(r.Problems) == 0 }

// Run checks the revision tree holds: render, policy, the stages, then the waivers. It
// fails only when the context ends or the tree's root cannot be read; everything wrong
// with the repository's content is a Problem of the result, and the rest is still checked.
func Run(ctx context.Context, tree *sources.Tree, opts Options) (*Result, error) {
	return runFound(ctx, find(ctx, tree, &opts), opts)
}

// found is a revision whose apps are found and not yet built (render.Prepare): a pull
// request's head is found while its base is checked.
type found struct {
	tree *sources.Tree
	apps *render.Prepared
	// err is why the apps could not be found: a broken olmsync.yaml (a problem of the
	// check) or an unreadable root.
	err error
}

// find finds the apps of the revision tree holds.
func find(ctx context.Context, tree *sources.Tree, opts *Options) *found {
	ropts := opts.Render
	ropts.Discovery = discoverOptions(tree, opts)
	apps, err := render.Prepare(ctx, tree.FS, tree.Root, ropts)
	return &found{tree: tree, apps: apps, err: err}
}

// runFound checks a found revision (Run).
func runFound(ctx context.Context, f *found, opts Options) (*Result, error) {
	res, err := runChecks(ctx, f, opts)
	// A working tree's git status runs beside the render (Source.Open); the report's
	// revision needs it.
	if serr := f.tree.Settle(); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	res.Revision = RevisionOf(f.tree)
	return res, nil
}

func runChecks(ctx context.Context, f *found, opts Options) (*Result, error) {
	tree := f.tree
	res := &Result{Tree: tree}
	var rendered *render.Result
	err := f.err
	if err == nil {
		rendered, err = f.apps.Build(ctx)
	}
	var cfgErr *render.ConfigError
	switch {
	case errors.As(err, &cfgErr):
		res.Problems = append(res.Problems, report.Problem{File: cfgErr.File, Line: cfgErr.Line, Message: err.Error()})
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("render %s: %w", tree.Source, err)
	}
	res.Render = rendered
	res.Problems, res.Warnings = renderDiagnostics(rendered)
	if len(rendered.Apps) == 0 {
		// A check of nothing must not pass: the folder is most likely the wrong one.
		res.Problems = append(res.Problems, report.Problem{Message: fmt.Sprintf(
			"found no apps in %s: no apps in %s, no entry point of this repository (Argo CD Application or ApplicationSet, Flux Kustomization), no kustomization, and no manifest outside Helm charts (olmsync does not render a Helm chart by itself)", tree.Source, render.ConfigFileName)})
	}
	res.Inputs = Inputs(rendered)
	setGlobalCatalogNamespaces(res.Inputs, opts.GlobalCatalogNamespaces)

	ev := &evaluation{tree: tree, cfg: rendered.Config, opts: &opts}
	if err := ev.run(ctx, res); err != nil {
		return nil, err
	}
	for _, s := range opts.Stages {
		sec, err := s.Run(ctx, res)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if err != nil {
			res.Problems = append(res.Problems, report.Problem{Message: fmt.Sprintf("%s: %v", s.Name(), err)})
			continue
		}
		if sec != nil {
			res.Sections = append(res.Sections, sec)
		}
	}
	if err := ev.waive(res); err != nil {
		return nil, err
	}
	return res, nil
}

// RevisionOf names the revision a tree holds the way the report does: a working tree with
// uncommitted changes is "worktree" without a commit; anything else is the branch or tag
// it was read at (when it was read at one) and its commit. A tree from
// sources.StartWorkTree must be settled first (Run does it).
func RevisionOf(tree *sources.Tree) report.Revision {
	if tree.Dirty {
		return report.Revision{Ref: "worktree"}
	}
	name := "" // a bare "sha1:<hex>" names no branch or tag
	if at := strings.LastIndex(tree.Revision, "@"); at >= 0 {
		name = tree.Revision[:at]
	}
	return report.Revision{Ref: name, Commit: tree.Commit}
}
