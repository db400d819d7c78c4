package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Discovery is what Discover found: the config in effect, the apps and how they were found,
// and what was left out and why.
type Discovery struct {
	// Config is olmsync.yaml with defaults filled in, or DefaultConfig() without one.
	Config *Config `json:"config"`
	// ConfigFile is "olmsync.yaml" when the repository has one, else "".
	ConfigFile string `json:"configFile,omitempty"`
	// Repository is how olmsync knows which Argo CD Applications deploy this repository.
	Repository RepositoryIdentity `json:"repository"`
	// Method is how most apps were found: config, argocd (some Application of this
	// repository deploys an app), kustomization or directory. Each app says its own.
	Method Method `json:"method"`
	// Apps are ordered by cluster, cluster-scope first, then name.
	Apps []App `json:"apps"`
	// Foreign are the Argo CD Applications and ApplicationSets of other repositories:
	// listed so the user sees what was not checked, never a problem.
	Foreign []ForeignApplication `json:"foreign,omitempty"`
	// Unused are kustomizations that are not apps although nothing includes them: bases
	// no overlay uses (DiscoveryConfig.BaseFolders).
	Unused []UnusedFolder `json:"unused,omitempty"`
	// Clusters are the cluster names the repository gives (an Argo CD destination or
	// cluster Secret, a Flux clusters/<name>/ folder, olmsync.yaml), each with where it is
	// named: the only clusters the built-in path conventions may name.
	Clusters map[string]string `json:"clusters,omitempty"`
	// Problems are Applications and files that could not be used, each with its place.
	Problems []Diagnostic `json:"problems,omitempty"`
}

// RepositoryIdentity is how the repository is known to its Argo CD Applications.
type RepositoryIdentity struct {
	// URLs are the URLs Applications may name this repository by; none when unknown.
	URLs []string `json:"urls,omitempty"`
	// From says where they come from: "olmsync.yaml repoURLs", or what the caller said
	// (the git remote, --repo-url); empty when unknown.
	From string `json:"from,omitempty"`
	// Path is the checked folder's path inside its repository ("" at the top).
	// Application paths are relative to the repository's top, so this prefix is
	// taken off them.
	Path string `json:"path,omitempty"`
}

// ForeignApplication is an Argo CD Application or ApplicationSet that deploys something
// other than this repository (or a folder outside the checked one).
type ForeignApplication struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	RepoURL string `json:"repoURL,omitempty"`
	Path    string `json:"path,omitempty"`
	// Reason says why it is taken to be of another repository.
	Reason string `json:"reason"`
}

// UnusedFolder is a kustomization that is neither an app nor part of one.
type UnusedFolder struct {
	Path   string `json:"path"`
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// DiscoverOptions say what the repository's files cannot: the URLs it is known by and
// where the checked folder sits in it.
type DiscoverOptions struct {
	// RepoURLs are the repository's URLs when olmsync.yaml gives none (its git remote,
	// --repo-url); RepoURLsFrom names where they come from, for `olmsync apps`.
	RepoURLs     []string
	RepoURLsFrom string
	// RepoPath is the checked folder's path inside its git repository, slash-separated,
	// "" at the top.
	RepoPath string
	// KnownClusters are cluster names the caller knows the repository deploys to (a
	// Sync's spec.cluster), named by KnownClustersFrom: the built-in path conventions
	// may name them.
	KnownClusters     []string
	KnownClustersFrom string
	// RootsAreApps says the caller deploys the repository's kustomization roots itself
	// (a Sync): when the repository has no entry point of its own, every root is an app
	// rather than a library root.
	RootsAreApps bool
}

// Discover finds the apps of the repository whose root folder is root in fsys: the apps of
// olmsync.yaml; else the Argo CD Applications of this repository and every kustomization
// root no Application covers (a dead base left out); else, with no kustomization at all,
// the repository as one directory app. Each app's cluster is its Application's
// destination, else a path convention's, else unknown (docs/ci.md). Only a broken
// olmsync.yaml (a *ConfigError) or an unreadable root is an error; everything else is a
// Problem.
//
// Discovery reads every manifest file of the repository once; it stops with ctx's error
// when ctx ends.
func Discover(ctx context.Context, fsys filesys.FileSystem, root string, opts DiscoverOptions) (*Discovery, error) {
	r, err := newRepo(fsys, root)
	if err != nil {
		return nil, err
	}
	return discover(ctx, r, opts)
}

func discover(ctx context.Context, r *repo, opts DiscoverOptions) (*Discovery, error) {
	cfg, cfgNode, err := loadConfig(r.fsys, r.root)
	if err != nil {
		return nil, err
	}
	d := &Discovery{Config: cfg}
	if cfg == nil {
		d.Config = DefaultConfig()
	} else {
		d.ConfigFile = ConfigFileName
	}
	if cfg != nil && len(cfg.Apps) > 0 {
		d.Method = MethodConfig
		var explicit map[int]bool
		d.Apps, explicit = appsFromConfig(cfg, cfgNode)
		settleClusterScopes(d.Apps, d.Config, explicit, nil)
		sortApps(d.Apps)
		return d, nil
	}
	d.Repository = repositoryIdentity(d.Config, opts)

	scan, err := scanRepo(ctx, r)
	if err != nil {
		return nil, err
	}
	var problems diagnostics
	for _, p := range scan.problems {
		problems.add(p)
	}
	entries := findEntryPoints(r, scan, d.Repository, d.Config, opts, &problems)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.Foreign = entries.foreign
	d.Apps = entries.apps
	d.Clusters = entries.clusters
	library := rootsAreLibrary(scan, entries, d.Config, opts)
	roots, unused := uncoveredRoots(scan, d.Apps, d.Config.Discovery, entries.clusters, library)
	d.Apps = append(d.Apps, roots...)
	d.Unused = unused
	switch {
	case len(entries.apps) > 0:
		d.Method = entries.apps[0].Found.Method
		for _, a := range entries.apps {
			if a.Found.Method == MethodArgoCD {
				d.Method = MethodArgoCD
			}
		}
	case len(roots) > 0 || len(scan.kustomizations) > 0 || len(scan.broken) > 0:
		d.Method = MethodKustomization
	default:
		d.Method = MethodDirectory
		if scan.manifests > 0 {
			d.Apps = []App{repositoryApp(d.Config.Discovery, entries.clusters, library)}
		}
	}
	d.Apps = dropDuplicateApps(d.Apps, &problems)
	settleClusterScopes(d.Apps, d.Config, nil, entries.projects)
	sortApps(d.Apps)
	d.Problems = problems.sorted()
	return d, nil
}

// rootsAreLibrary decides what the kustomization roots no entry point deploys are. They
// are library roots — checked on their own, without the placement rules — when the
// repository's own entry points say what it deploys (they are then what it does not), and
// in a repository with no entry point at all unless something says the roots are what is
// deployed: olmsync.yaml (discovery.uncoveredRoots: apps, or clusterPaths or clusters of
// its own), the caller (a Sync deploys the roots of its repository), or a root that is a
// cluster-scope app (the ADR's layout without Argo CD in the repository).
func rootsAreLibrary(s *repoScan, e entryResult, cfg *Config, opts DiscoverOptions) bool {
	switch {
	case cfg.Discovery.UncoveredRoots == UncoveredRootsApps:
		return false
	case cfg.Discovery.UncoveredRoots == UncoveredRootsLibrary || len(e.apps) > 0:
		return true
	case opts.RootsAreApps, cfg.Discovery.ClusterPathsGiven, len(cfg.Discovery.Clusters) > 0, len(cfg.Policy.ClusterScopeApps) > 0:
		return false
	}
	for _, k := range s.kustomizations {
		if hasClusterScopeSegment(k.Dir) {
			return false
		}
	}
	return true
}

// fromConfig is RepositoryIdentity.From for olmsync.yaml's repoURLs.
const fromConfig = ConfigFileName + " repoURLs"

// fromConfig reports whether olmsync.yaml names the repository: its folder is then the
// repository as its Applications see it (a path that is neither under Path nor in the
// folder is missing, not elsewhere).
func (id RepositoryIdentity) fromConfig() bool { return id.From == fromConfig }

// repositoryIdentity decides the URLs that name this repository: olmsync.yaml's repoURLs
// when it has any, else the caller's (the git remote, --repo-url).
func repositoryIdentity(cfg *Config, opts DiscoverOptions) RepositoryIdentity {
	id := RepositoryIdentity{Path: strings.Trim(opts.RepoPath, "/")}
	if id.Path == "." {
		id.Path = ""
	}
	switch {
	case len(cfg.RepoURLs) > 0:
		id.URLs, id.From = cfg.RepoURLs, fromConfig
	case len(opts.RepoURLs) > 0:
		id.URLs, id.From = opts.RepoURLs, opts.RepoURLsFrom
	}
	return id
}

// repositoryApp is the whole repository read as one directory app: what Argo CD does with
// a directory source, recursively, leaving out hidden folders and files that hold no
// Kubernetes object.
func repositoryApp(cfg DiscoveryConfig, known map[string]string, library bool) App {
	app := App{
		Name: ".", Path: ".", Recurse: true, Lenient: true,
		ClusterScope: false, ClusterScopeReason: fmt.Sprintf("its path has no %q segment", ClusterScopeSegment),
		Found: Found{Method: MethodDirectory, File: ".",
			Reason: "the repository has no kustomization and no entry point of its own (Argo CD Application or ApplicationSet, Flux Kustomization): its manifests are read as one directory app, as Argo CD reads a directory source"},
	}
	if library {
		markLibrary(&app)
		return app
	}
	placeByPath(&app, cfg, known)
	return app
}

// appsFromConfig makes the apps olmsync.yaml lists; explicit says, by index, which of them
// set clusterScope themselves.
func appsFromConfig(cfg *Config, node *yaml.Node) (apps []App, explicit map[int]bool) {
	apps = make([]App, 0, len(cfg.Apps))
	explicit = map[int]bool{}
	for i, ca := range cfg.Apps {
		if ca.ClusterScope != nil {
			explicit[i] = true
		}
		p := path.Clean(ca.Path)
		scope, why := decideClusterScope(p, ca.ClusterScope)
		apps = append(apps, App{
			Name:               ca.Name,
			Path:               p,
			Namespace:          ca.Namespace,
			Cluster:            ca.Cluster,
			ClusterScope:       scope,
			ClusterScopeReason: why,
			Recurse:            ca.Recurse,
			ClusterFrom:        ClusterFromConfig,
			ClusterReason:      configClusterReason(ca.Cluster),
			Found: Found{Method: MethodConfig, File: ConfigFileName, Line: seqItemLine(node, "apps", i),
				Reason: fmt.Sprintf("listed in %s as apps[%d]", ConfigFileName, i)},
		})
	}
	return apps, explicit
}

func configClusterReason(cluster string) string {
	if cluster == "" {
		return ConfigFileName + " gives it no cluster: it is in the default cluster with the other apps without one"
	}
	return fmt.Sprintf("%s gives cluster %q", ConfigFileName, cluster)
}

// dropDuplicateApps keeps the first app of each cluster and name, reporting the others.
func dropDuplicateApps(apps []App, problems *diagnostics) []App {
	seen := map[string]App{}
	out := apps[:0]
	for _, a := range apps {
		if first, dup := seen[a.ID()]; dup {
			problems.add(Diagnostic{Reason: ReasonDuplicateApp, File: a.Found.File, Line: a.Found.Line,
				Message: fmt.Sprintf("app %q is defined again in cluster %s (first in %s:%d); skipped",
					a.Name, clusterLabel(a.Cluster), first.Found.File, first.Found.Line)})
			continue
		}
		seen[a.ID()] = a
		out = append(out, a)
	}
	return out
}

// repoScan is what one walk of the repository collects.
type repoScan struct {
	// kustomizations are the readable kustomizations, by folder.
	kustomizations []*kustomization
	// broken are folders whose kustomization could not be read.
	broken []string
	// brokenFiles are the files of those kustomizations.
	brokenFiles map[string]string
	// referenced are folders another kustomization uses as a resource, base, component,
	// generator, transformer or validator.
	referenced map[string]bool
	// includes are those uses, by the folder of the kustomization that uses them: the
	// include graph that decides which folders an app covers.
	includes map[string][]string
	// manifests counts the .yaml, .yml and .json files outside hidden folders.
	manifests int
	// patchFiles are files kustomizations use as patches: they hold partial objects.
	patchFiles map[string]bool
	// entryFiles are YAML files that mention Argo CD's or Flux's API group: the files that
	// may hold entry points (entryMarkers).
	entryFiles []string
	// dirs and files are every folder and file of the repository, outside .git.
	dirs, files []string
	// charts are the folders of Helm charts (a Chart.yaml): their files are Helm's
	// templates and values, which olmsync neither renders nor reads for entry points.
	charts   map[string]bool
	problems []Diagnostic
}

// inChart reports whether a repository path is inside a Helm chart's folder.
func (s *repoScan) inChart(rel string) bool {
	for d := path.Dir(rel); ; d = path.Dir(d) {
		if s.charts[d] {
			return true
		}
		if d == "." || d == "/" {
			return false
		}
	}
}

func scanRepo(ctx context.Context, r *repo) (*repoScan, error) {
	s := &repoScan{referenced: map[string]bool{}, includes: map[string][]string{}, patchFiles: map[string]bool{},
		brokenFiles: map[string]string{}, charts: map[string]bool{}}
	err := r.walkRepo(func(rel string, isDir bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if isDir {
			s.dirs = append(s.dirs, rel)
			return nil
		}
		s.files = append(s.files, rel)
		if path.Base(rel) == "Chart.yaml" {
			s.charts[path.Dir(rel)] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk repository: %w", err)
	}
	r.noteWalk(s.dirs, s.files)
	var manifests []string
	for _, rel := range s.files {
		if !isManifestName(rel) || s.inChart(rel) {
			continue
		}
		if len(manifests) == MaxManifestFiles {
			return nil, &ConfigError{File: ".", Msg: fmt.Sprintf("the repository holds more than %d YAML and JSON files; olmsync reads at most %d: %v", MaxManifestFiles, MaxManifestFiles, ErrTooManyFiles)}
		}
		manifests = append(manifests, rel)
	}
	// Reading each file and parsing each folder's kustomization are work of their own: they
	// run on every core, r keeps what they read, and what they found is taken in order below.
	isEntry := make([]bool, len(manifests))
	parallel(ctx, runtime.GOMAXPROCS(0), len(manifests)+len(s.dirs), func(i int) {
		if i < len(manifests) {
			data, err := r.readFile(manifests[i])
			isEntry[i] = err == nil && slices.ContainsFunc(entryMarkers, func(m []byte) bool { return bytes.Contains(data, m) })
			return
		}
		_, _ = r.kustomizationAt(s.dirs[i-len(manifests)]) // its error is taken in order below
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, rel := range manifests {
		if rel != ConfigFileName && !inHiddenFolder(rel) {
			s.manifests++
		}
		if isEntry[i] {
			s.entryFiles = append(s.entryFiles, rel)
		}
	}
	for _, dir := range s.dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		k, err := r.kustomizationAt(dir)
		if err != nil {
			s.broken = append(s.broken, dir)
			s.brokenFiles[dir] = errorFile(err, dir)
			s.problems = append(s.problems, problemFromError(err, dir))
			s.noteBrokenReferences(r, dir, s.brokenFiles[dir])
			continue
		}
		if k == nil {
			continue
		}
		s.kustomizations = append(s.kustomizations, k)
		s.noteReferences(r, k)
	}
	return s, nil
}

// noteReferences records the folders and patch files kustomization k uses.
func (s *repoScan) noteReferences(r *repo, k *kustomization) {
	dirRefs := slices.Concat(k.K.Resources, k.Legacy.Bases, k.K.Components, k.K.Generators, k.K.Transformers, k.K.Validators)
	for _, ref := range dirRefs {
		if p, ok := join(k.Dir, ref); ok && !isRemoteBase(ref) && r.isDir(p) {
			s.referenced[p] = true
			s.includes[k.Dir] = append(s.includes[k.Dir], p)
		}
	}
	notePatch := func(ref string) {
		if p, ok := join(k.Dir, ref); ok && ref != "" && !strings.Contains(ref, "\n") {
			s.patchFiles[p] = true
		}
	}
	for _, psm := range k.Legacy.PatchesStrategicMerge {
		notePatch(string(psm))
	}
	for _, p := range slices.Concat(k.K.Patches, k.Legacy.PatchesJson6902) {
		notePatch(p.Path)
	}
}

// noteBrokenReferences records the folders a kustomization that kustomize refuses still
// names, when its YAML can be read (a field of the wrong type, say): its bases are then
// still known to be used, not taken for unused ones or for roots of their own.
func (s *repoScan) noteBrokenReferences(r *repo, dir, file string) {
	raw, err := r.readFile(file)
	if err != nil {
		return
	}
	docs, err := decodeDocs(file, raw)
	if err != nil || len(docs) != 1 {
		return
	}
	for _, field := range []string{"resources", "bases", "components"} {
		seq := mapValue(docs[0].Node, field)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range seq.Content {
			if item.Kind != yaml.ScalarNode || isRemoteBase(item.Value) {
				continue
			}
			if p, ok := join(dir, item.Value); ok && r.isDir(p) {
				s.referenced[p] = true
				s.includes[dir] = append(s.includes[dir], p)
			}
		}
	}
}

// uncoveredRoots are the kustomization roots — kustomizations no other kustomization uses,
// components aside — that no app covers. Each is a library root, or, when library is
// false, an app of its own, its cluster named by a path convention or unknown. A root in
// a base folder (DiscoveryConfig.BaseFolders) is an unused base instead, while the
// repository has other apps. A kustomization that cannot be read is a root, so that its
// error is reported against an app.
func uncoveredRoots(s *repoScan, apps []App, cfg DiscoveryConfig, known map[string]string, library bool) (roots []App, unused []UnusedFolder) {
	covered := coveredFolders(s, apps)
	type candidate struct{ dir, file string }
	var candidates []candidate
	for _, k := range s.kustomizations {
		if !s.referenced[k.Dir] && k.K.Kind != types.ComponentKind {
			candidates = append(candidates, candidate{k.Dir, k.File})
		}
	}
	for _, dir := range s.broken {
		if !s.referenced[dir] {
			candidates = append(candidates, candidate{dir, s.brokenFiles[dir]})
		}
	}
	root := func(c candidate) App {
		app := rootApp(c.dir, c.file)
		if library {
			markLibrary(&app)
		} else {
			placeByPath(&app, cfg, known)
		}
		return app
	}
	var bases []candidate
	for _, c := range candidates {
		if covered.has(c.dir) {
			continue
		}
		if inBaseFolder(c.dir, cfg.BaseFolders) {
			bases = append(bases, c)
			continue
		}
		roots = append(roots, root(c))
	}
	if len(apps) == 0 && len(roots) == 0 {
		// Nothing but bases: they are what the repository deploys.
		for _, c := range bases {
			roots = append(roots, root(c))
		}
		return roots, nil
	}
	for _, c := range bases {
		unused = append(unused, UnusedFolder{Path: c.dir, File: c.file,
			Reason: "a base no app includes (its folder is one of discovery.baseFolders); not checked"})
	}
	return roots, unused
}

func rootApp(dir, file string) App {
	scope, why := decideClusterScope(dir, nil)
	return App{
		Name: dir, Path: dir, ClusterScope: scope, ClusterScopeReason: why,
		Found: Found{Method: MethodKustomization, File: file,
			Reason: "kustomization root: no other kustomization uses this folder, and no entry point of this repository (Argo CD Application or ApplicationSet, Flux Kustomization) deploys it or a folder that includes it"},
	}
}

// LibraryHint is the one line that says how to tell olmsync where library roots are
// deployed.
const LibraryHint = "if another repository deploys them, list them in " + ConfigFileName + " (apps:, with their clusters), or set discovery.uncoveredRoots: apps"

// markLibrary makes an app a library root.
func markLibrary(app *App) {
	app.Library = true
	app.Cluster = ""
	app.ClusterFrom = ClusterNone
	app.ClusterReason = "a library root: no entry point of this repository deploys it, so it is checked on its own, without the placement rules; " + LibraryHint
	app.Found.Reason += "; a library root"
}

// placeByPath names an app's cluster from the first path convention that matches its
// folder. A convention olmsync.yaml gives applies as written; a built-in one names only a
// cluster the repository names elsewhere (known). Without one, the cluster is unknown.
func placeByPath(app *App, cfg DiscoveryConfig, known map[string]string) {
	var refused []string
	for _, c := range parseClusterPaths(cfg.ClusterPaths) {
		cluster, ok := c.match(app.Path)
		if !ok {
			continue
		}
		if where, named := known[cluster]; cfg.ClusterPathsGiven || named {
			app.Cluster, app.ClusterFrom = cluster, ClusterFromPath
			app.ClusterReason = fmt.Sprintf("its path matches the convention %q", c.pattern)
			if !cfg.ClusterPathsGiven {
				app.ClusterReason += fmt.Sprintf(", and the repository names cluster %q (%s)", cluster, where)
			}
			return
		}
		refused = append(refused, fmt.Sprintf("%q would name %q", c.pattern, cluster))
	}
	app.ClusterFrom = ClusterUnknown
	app.ClusterReason = "no entry point deploys it and no path convention (discovery.clusterPaths) names its cluster: rules that compare two objects compare its objects only with each other"
	if len(refused) > 0 {
		app.ClusterReason = fmt.Sprintf("the built-in path convention %s, a cluster the repository names nowhere else (an Argo CD destination, a Flux clusters/<name>/ folder, discovery.clusters in %s): its cluster is unknown, and rules that compare two objects compare its objects only with each other",
			strings.Join(refused, " and "), ConfigFileName)
	}
}

// folderSet is a set of repository folders, some of them with every folder below.
type folderSet struct {
	exact, trees map[string]bool
}

func (f folderSet) has(dir string) bool {
	if f.exact[dir] {
		return true
	}
	for d := dir; ; d = path.Dir(d) {
		if f.trees[d] {
			return true
		}
		if d == "." || d == "/" {
			return false
		}
	}
}

// coveredFolders are the folders the apps read: each app's folder, every folder its
// kustomization includes (transitively), and everything below a recursive directory app.
func coveredFolders(s *repoScan, apps []App) folderSet {
	f := folderSet{exact: map[string]bool{}, trees: map[string]bool{}}
	var visit func(dir string)
	visit = func(dir string) {
		if f.exact[dir] {
			return
		}
		f.exact[dir] = true
		for _, child := range s.includes[dir] {
			visit(child)
		}
	}
	for _, a := range apps {
		visit(a.Path)
		if a.Recurse {
			f.trees[a.Path] = true
		}
	}
	return f
}

// inBaseFolder reports whether a folder path has a segment that names a base folder.
func inBaseFolder(dir string, baseFolders []string) bool {
	for _, seg := range strings.Split(dir, "/") {
		if slices.Contains(baseFolders, seg) {
			return true
		}
	}
	return false
}

// inHiddenFolder reports whether a repository path is inside a folder whose name starts
// with "." (.github, .git).
func inHiddenFolder(rel string) bool {
	dir := path.Dir(rel)
	if dir == "." {
		return false
	}
	for _, seg := range strings.Split(dir, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// isManifestName reports whether a file name is one olmsync reads manifests from.
func isManifestName(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// errorFile is the file an error names, else dir.
func errorFile(err error, dir string) string {
	var ye *YAMLError
	if errors.As(err, &ye) {
		return ye.File
	}
	return dir
}

func problemFromError(err error, dir string) Diagnostic {
	var ye *YAMLError
	if errors.As(err, &ye) {
		return Diagnostic{Reason: ReasonUnreadable, File: ye.File, Line: ye.Line, Message: ye.Msg, Hint: Hint(err)}
	}
	return Diagnostic{Reason: ReasonUnreadable, File: dir, Message: err.Error(), Hint: Hint(err)}
}
