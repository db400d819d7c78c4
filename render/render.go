package render

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Options say what kustomize may do beyond reading the repository. The zero value is the
// safe default: everything that runs code, reaches the network or leaves the repository is
// off, and each switch turns on one thing. olmsync.yaml cannot turn any of them on: a pull
// request must not be able to make CI run its code.
type Options struct {
	// Parallelism bounds how many apps build at once; 0 means GOMAXPROCS.
	Parallelism int
	// AllowRemoteBases lets kustomizations use remote bases (git URLs) and remote files
	// (http/https). Off, such a reference fails the app with ErrRemoteDisabled and no
	// network call is made.
	AllowRemoteBases bool
	// EnableExecPlugins runs exec KRM functions and legacy exec (and Go) plugins. Off, a
	// generator needing one is left out with a warning; a transformer or validator
	// needing one fails the app with ErrPluginDisabled. Nothing is executed.
	EnableExecPlugins bool
	// EnableContainerPlugins runs container KRM functions, likewise.
	EnableContainerPlugins bool
	// EnableHelm lets kustomizations inflate Helm charts (helmCharts) with HelmCommand.
	EnableHelm bool
	// HelmCommand is the helm binary; default "helm".
	HelmCommand string
	// Discovery says what the repository's files cannot: its URLs (for Argo CD
	// Applications) and where the checked folder sits in it.
	Discovery DiscoverOptions
	// Cache, when set, keeps built apps by the digest of their inputs: an app whose inputs
	// another render with the same Cache built is not built again (check --base renders
	// the base and the head with one Cache).
	Cache *Cache
	// PostBuild is what a Sync adds to every app after its build (target namespace,
	// patches, common metadata, variable substitution); nil for a plain check.
	PostBuild *PostBuild
	// Decryption decrypts SOPS-encrypted objects and secretGenerator sources (a Sync's
	// spec.decryption); nil leaves them encrypted, as a plain check does.
	Decryption *Decryption
	// Switches say, in messages, how the user turns on what these options leave off;
	// the zero value names `olmsync check`'s flags.
	Switches Switches
	// NodeBudget bounds the YAML nodes, aliases expanded, that the builds of one render
	// read together (0: no bound): what kustomize builds of them is what a render holds,
	// at up to NodeCost bytes a node. An app whose build would take the render past it is
	// not built: it fails with ErrOverBudget, naming its heaviest file. NodeBudgetFrom
	// says in messages where the budget comes from ("--memory-limit 2Gi").
	NodeBudget     int64
	NodeBudgetFrom string
	// Accept, when set, is asked once olmsync.yaml is read and the apps are found, before
	// any is built; its error ends the render and is returned as it is. The light build's
	// check uses it to hand a repository whose olmsync.yaml names catalogs to the build
	// that has the OLM preview.
	Accept func(*Config) error

	// markByTree marks every resource file through its tree (markObjects), never in its
	// text (textMarks): tests compare the two ways on real repositories.
	markByTree bool
}

// NodeCost is what one YAML node of a manifest costs a check at worst, in bytes, from
// reading it to evaluating the rules over what it renders: a 2 MB resource of 990,000
// scalars peaks at 1.2 GB. NodeBudgetFor turns a memory limit into a node budget with it.
const NodeCost = 1300

// NodeBudgetFor is the node budget of a render under a memory limit in bytes: the nodes
// that fit in four fifths of it at NodeCost each (the rest for the process itself).
func NodeBudgetFor(limit uint64) int64 {
	if limit == 0 {
		return 0
	}
	return int64(limit / 5 * 4 / NodeCost)
}

// Switches are the words for turning on what Options leave off, as the caller's user
// knows them: a flag of `olmsync check`, or what a Sync's reconciler says.
type Switches struct {
	RemoteBases, ExecPlugins, ContainerPlugins, Helm string
}

// CheckSwitches are `olmsync check`'s flags: the words of the zero Switches.
var CheckSwitches = Switches{
	RemoteBases:      "enable them with --allow-remote-bases",
	ExecPlugins:      "enable them with --enable-exec-plugins",
	ContainerPlugins: "enable them with --enable-container-plugins",
	Helm:             "enable it with --enable-helm",
}

// SyncSwitches are what a Sync's reconciler says: it never turns them on.
var SyncSwitches = Switches{
	RemoteBases:      "a Sync never fetches them: vendor the base into the repository",
	ExecPlugins:      "a Sync never runs plugins",
	ContainerPlugins: "a Sync never runs plugins",
	Helm:             "a Sync never inflates Helm charts",
}

func (s Switches) orDefault() Switches {
	if s == (Switches{}) {
		return CheckSwitches
	}
	return s
}

func (o Options) withDefaults() Options {
	if o.Parallelism <= 0 {
		o.Parallelism = runtime.GOMAXPROCS(0)
	}
	if o.HelmCommand == "" {
		o.HelmCommand = "helm"
	}
	o.Switches = o.Switches.orDefault()
	return o
}

// Result is a rendered repository: every app with its objects or its error, grouped by
// cluster, and what is worth telling the user.
//
// The model, for the stages after render (policy, the OLM preview, reconcile):
//
//   - Clusters is what rules iterate: each Cluster holds its apps (cluster-scope apps
//     first) and Cluster.Objects() gives all of them. Rules that look across objects stay
//     within one Cluster; Cluster.Complete() says whether every app of it rendered.
//   - An AppResult is an App (name, path, destination namespace and cluster, whether it is
//     the cluster-scope app, how it was found) with either Objects or Err (a *BuildError
//     naming file and line), never both.
//   - An Object is the manifest exactly as it would be applied (Manifest), its app and
//     cluster, its Source (repository-relative file, the line its document starts on, and
//     for generated objects the generator), its Scope, and its EffectiveNamespace: the
//     namespace it lands in, the app's destination namespace when the manifest has none.
//   - Config is the olmsync.yaml in effect (policy settings, waivers, catalogs).
//   - Problems (discovery) and Warnings (build) are Diagnostics with file, line and apps.
type Result struct {
	// Config is the config in effect (olmsync.yaml with defaults, or DefaultConfig()).
	Config *Config `json:"config"`
	// ConfigFile is "olmsync.yaml" when the repository has one, else "".
	ConfigFile string `json:"configFile,omitempty"`
	// Method is how the apps were found.
	Method Method `json:"method"`
	// Repository, Foreign and Unused are Discovery's: what is known of the repository,
	// the Applications of other repositories and the unused bases, none of them checked.
	Repository RepositoryIdentity   `json:"repository"`
	Foreign    []ForeignApplication `json:"foreign,omitempty"`
	Unused     []UnusedFolder       `json:"unused,omitempty"`
	// Apps are every app, rendered or failed, ordered by cluster, cluster-scope first,
	// then name.
	Apps []*AppResult `json:"apps"`
	// Clusters group Apps by destination cluster, in cluster-name order (the default
	// cluster, named "", first).
	Clusters []*Cluster `json:"clusters"`
	// Problems are discovery problems: Applications that could not be used, files that
	// could not be read while looking for apps.
	Problems []Diagnostic `json:"problems,omitempty"`
	// Warnings are build warnings: kustomize's deprecations and other messages (once per
	// file, with the apps concerned), generators left out.
	Warnings []Diagnostic `json:"warnings,omitempty"`
}

// Failed returns the apps that could not be rendered.
func (r *Result) Failed() []*AppResult {
	var out []*AppResult
	for _, a := range r.Apps {
		if a.Err != nil {
			out = append(out, a)
		}
	}
	return out
}

// AppResult is one app and what rendering it gave: objects, or an error.
type AppResult struct {
	App
	// Objects are the rendered objects in kustomize's output order (plain folders: file
	// order, then document order). Empty when Err is set.
	Objects []*Object `json:"objects"`
	// Err is why the app could not be rendered: a *BuildError naming the file (and line)
	// at fault. A failed app renders nothing; callers must not treat its objects as gone.
	Err error `json:"-"`
	// Error is Err's message, for JSON output.
	Error string `json:"error,omitempty"`
}

// Render finds the apps of the repository at root in fsys (see Discover) and renders each
// (see Build). It fails only when the root cannot be read or olmsync.yaml is broken; a
// failed app is reported in its AppResult and the others are still rendered.
func Render(ctx context.Context, fsys filesys.FileSystem, root string, opts Options) (*Result, error) {
	p, err := Prepare(ctx, fsys, root, opts)
	if err != nil {
		return nil, err
	}
	return p.Build(ctx)
}

// Prepared is a repository whose apps are found and not yet built: Render's first half
// done. A pull request's check finds the head's apps while it checks the base, since
// finding them is mostly one core's work (the walk) and the base's builds wait for none
// of it.
type Prepared struct {
	r    *repo
	d    *Discovery
	opts Options
}

// Prepare finds the apps of the repository at root in fsys (see Discover) and, when
// opts.Accept is set, asks it; Build builds them. Its errors are Render's.
func Prepare(ctx context.Context, fsys filesys.FileSystem, root string, opts Options) (*Prepared, error) {
	r, err := newRepo(fsys, root)
	if err != nil {
		return nil, err
	}
	r.nodeBudget, r.nodeBudgetFrom = opts.NodeBudget, cmp.Or(opts.NodeBudgetFrom, "its memory limit")
	d, err := discover(ctx, r, opts.Discovery)
	if err != nil {
		return nil, err
	}
	if opts.Accept != nil {
		if err := opts.Accept(d.Config); err != nil {
			return nil, err
		}
	}
	return &Prepared{r: r, d: d, opts: opts}, nil
}

// Build builds every app Prepare found (see Render). It is called once.
func (p *Prepared) Build(ctx context.Context) (*Result, error) {
	return build(ctx, p.r, p.d, p.opts)
}

func build(ctx context.Context, r *repo, d *Discovery, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	res := &Result{Config: d.Config, ConfigFile: d.ConfigFile, Method: d.Method, Problems: d.Problems,
		Repository: d.Repository, Foreign: d.Foreign, Unused: d.Unused}
	res.Apps = make([]*AppResult, len(d.Apps))
	for i := range d.Apps {
		res.Apps[i] = &AppResult{App: d.Apps[i]}
	}

	// Plan every app first: it reads every file once (shared bases are parsed once) and
	// tells whether kustomize's stray output must be captured before any build starts. An
	// app whose inputs an earlier render with the same Cache built, unchanged, is taken
	// from it unplanned (a pull request's head: most apps are as in the base).
	b := &builder{r: r, opts: &opts}
	plans := make([]*plan, len(res.Apps))
	reused := make([]*planEntry, len(res.Apps))
	parallel(ctx, opts.Parallelism, len(res.Apps), func(i int) {
		if objs, e, ok := b.reuse(&res.Apps[i].App); ok {
			res.Apps[i].Objects, reused[i] = objs, e
			return
		}
		p, berr := planApp(r, &opts, &res.Apps[i].App)
		if berr != nil {
			res.Apps[i].Err = berr
			return
		}
		plans[i] = p
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.keepToBudget(res.Apps, plans)
	// The builds read little of what planning read; they hold the rendered objects instead.
	r.releaseTrees(plans, b.cacheable())

	if needsCapture(plans, &opts) {
		release, err := stray.acquire()
		if err != nil {
			return nil, fmt.Errorf("capture kustomize output: %w", err)
		}
		defer release()
	}

	kustomizeState.Lock()
	parseSchema()
	kustomizeState.Unlock()
	planWarnings := b.buildAll(ctx, res.Apps, plans, reused)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var warnings diagnostics
	for i, a := range res.Apps {
		if a.Err != nil {
			a.Error = a.Err.Error()
		}
		for _, w := range planWarnings[i] {
			warnings.add(w)
		}
		if reused[i] != nil {
			for _, w := range reused[i].warnings {
				warnings.add(w)
			}
		}
	}
	res.Warnings = warnings.sorted()
	res.Clusters = groupClusters(res.Apps)
	for _, c := range res.Clusters {
		c.settleNamespaces()
	}
	return res, nil
}

// buildAll builds the planned apps (plans[i] is apps[i]'s; nil for an app that failed
// planning or that the render cache gave: reused[i]) and post-builds them, reused ones
// too. It gives back what planning and kustomize said about each app built, and drops
// each plan once its app is built, with the repository's content only that build still
// read (repo.built): until the last app is built the builds hold the rendered objects,
// and a plan no build reads again is memory spent for nothing (issue 18).
func (b *builder) buildAll(ctx context.Context, apps []*AppResult, plans []*plan, reused []*planEntry) (warnings [][]Diagnostic) {
	warnings = make([][]Diagnostic, len(apps))
	shared := newSharer()
	parallel(ctx, b.opts.Parallelism, len(apps), func(i int) {
		a := apps[i]
		// Once built, decrypted and post-built, an app's objects share what they have in
		// common with the apps built before (see sharer).
		defer func() { shared.objects(a.Objects) }()
		if e := reused[i]; e != nil {
			if perr := b.opts.PostBuild.apply(a.Objects); perr != nil {
				a.Objects, a.Err = nil, &BuildError{App: a.ID(), File: e.file, Err: perr}
			}
			warnings[i] = checkNames(a.ID(), a.Objects)
			return
		}
		p := plans[i]
		if p == nil {
			return
		}
		defer func() {
			b.r.built(p)
			plans[i] = nil
		}()
		objs, lines, err := b.buildCached(p)
		if err == nil {
			// Decrypted before the post-build, as Flux decrypts before it substitutes.
			if err = b.opts.Decryption.decryptObjects(p.app.ID(), objs); err != nil {
				objs = nil
			}
		}
		if err == nil {
			if perr := b.opts.PostBuild.apply(objs); perr != nil {
				objs, err = nil, &BuildError{App: p.app.ID(), File: p.file(), Err: perr}
			}
		}
		a.Objects, a.Err = objs, err
		warnings[i] = append(append(p.warnings, lines...), checkNames(a.ID(), objs)...)
	})
	return warnings
}

// keepToBudget fails, in app order, every planned app whose build would take the render
// past Options.NodeBudget, naming the heaviest file it reads; the apps that fit are built.
func (b *builder) keepToBudget(apps []*AppResult, plans []*plan) {
	budget := b.opts.NodeBudget
	if budget <= 0 {
		return
	}
	var used int64
	for i, p := range plans {
		if p == nil {
			continue
		}
		if used+p.nodes <= budget {
			used += p.nodes
			continue
		}
		apps[i].Err = &BuildError{App: apps[i].ID(), File: p.heaviest, Err: fmt.Errorf(
			"the app's build reads %d YAML nodes, aliases expanded (%d of them in this file), and the apps before it %d: over the %d a render may read under %s: %w",
			p.nodes, p.heaviestNodes, used, budget, cmp.Or(b.opts.NodeBudgetFrom, "its memory limit"), ErrOverBudget)}
		plans[i] = nil
	}
}

// needsCapture: a build touches os.Stderr only for deprecated fields and plugins, and the
// standard logger only for vars. Without those nothing is redirected.
func needsCapture(plans []*plan, opts *Options) bool {
	if opts.EnableExecPlugins || opts.EnableContainerPlugins || opts.EnableHelm || opts.AllowRemoteBases {
		return true
	}
	for _, p := range plans {
		if p != nil && (p.deprecated || p.exclusive) {
			return true
		}
	}
	return false
}

// parallel runs fn(0..n-1) on at most limit goroutines, skipping what is left once ctx is
// done.
func parallel(ctx context.Context, limit, n int, fn func(i int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}
