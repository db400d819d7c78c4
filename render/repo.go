package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// repo is the repository being rendered: the filesystem, its root, and caches of every
// kustomization and manifest file read so far. Apps share bases, so each file is parsed
// once per render however many apps use it. Safe for concurrent use.
//
// What it keeps follows the render's phases. Discovery and planning read every file of
// every app, and it keeps all of them: content, trees, kustomizations. The builds then
// read little of it, while the rendered objects pile up, so when planning ends
// (releaseTrees) it keeps only what a build still to run reads, and lets each file go with
// the last build that reads it (built).
type repo struct {
	// nodeBudget bounds the nodes of the files parsed (Options.NodeBudget), parsed
	// counts them, nodeBudgetFrom says where the budget comes from.
	nodeBudget     int64
	nodeBudgetFrom string
	parsed         atomic.Int64

	fsys filesys.FileSystem
	// root is the absolute, cleaned root as the filesystem resolves it.
	root string

	mu    sync.Mutex
	kusts map[string]*onceEntry[*kustomization]
	files map[string]*onceEntry[*manifestFile]
	// generators are, by folder, what the builds read of each kustomization (see
	// generatorIndex).
	generators map[string]*onceEntry[*generatorIndex]
	// marked are manifest files with each object marked with its source (markedManifest).
	marked map[string]*onceEntry[[]byte]
	// raw keeps what readFile read: discovery reads every manifest file once (looking for
	// Argo CD Applications), and planning reads most of them again.
	raw map[string][]byte
	// walked are the folders discovery's walk listed, and listed the files in them: a
	// folder's kustomization is then found without a stat per recognised file name.
	walked, listed map[string]bool
	// sortedListed is listed's files in order, made when the render cache first needs it.
	sortedListed []string
	// treesReleased: planning is over. Kustomizations keep only their generators, and raw
	// and marked only the files that builds still to run read, counted in uses (see
	// releaseTrees).
	treesReleased bool
	// keepContent: raw keeps every file even after planning, for the render cache's
	// digests, which read every file under an app's folders.
	keepContent bool
	// uses counts, by file, the builds still to run that read its content (plan.reads).
	uses map[string]int
}

type onceEntry[T any] struct {
	once sync.Once
	val  T
	err  error
}

// loadOnce returns what load returns for key, calling load once per key of m however many
// goroutines ask at once: the first runs it, the others wait for its result. m is one of
// r's caches, read and written under r.mu.
func loadOnce[T any](r *repo, m map[string]*onceEntry[T], key string, load func() (T, error)) (T, error) {
	r.mu.Lock()
	e, ok := m[key]
	if !ok {
		e = &onceEntry[T]{}
		m[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() { e.val, e.err = load() })
	return e.val, e.err
}

func newRepo(fsys filesys.FileSystem, root string) (*repo, error) {
	dir, file, err := fsys.CleanedAbs(root)
	if err != nil {
		return nil, fmt.Errorf("repository root %q: %w", root, err)
	}
	if file != "" {
		return nil, fmt.Errorf("repository root %q is a file, not a folder", root)
	}
	return &repo{
		fsys:       fsys,
		root:       dir.String(),
		kusts:      map[string]*onceEntry[*kustomization]{},
		files:      map[string]*onceEntry[*manifestFile]{},
		generators: map[string]*onceEntry[*generatorIndex]{},
		marked:     map[string]*onceEntry[[]byte]{},
		raw:        map[string][]byte{},
	}, nil
}

// abs turns a repository-relative path into the filesystem's absolute path.
func (r *repo) abs(rel string) string { return path.Join(r.root, rel) }

// rel turns an absolute path under the root into a repository-relative one.
func (r *repo) rel(abs string) (string, bool) {
	abs = path.Clean(abs)
	if abs == r.root {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(abs, r.root+"/"); ok {
		return rest, true
	}
	if r.root == "/" && strings.HasPrefix(abs, "/") {
		return abs[1:], true
	}
	return "", false
}

// inside reports whether rel, with symlinks resolved as the filesystem resolves them,
// stays inside the repository.
func (r *repo) inside(rel string) bool {
	d, f, err := r.fsys.CleanedAbs(r.abs(rel))
	if err != nil {
		return true // it does not exist; nothing to escape to
	}
	_, ok := r.rel(d.Join(f))
	return ok
}

// readFile reads a repository file, refusing one that a symlink leads out of the repository.
func (r *repo) readFile(rel string) ([]byte, error) {
	r.mu.Lock()
	data, ok := r.raw[rel]
	r.mu.Unlock()
	if ok {
		return data, nil
	}
	if !r.inside(rel) {
		return nil, &fileError{file: rel, err: fmt.Errorf("%w (through a symbolic link)", ErrOutsideRepository)}
	}
	data, err := r.fsys.ReadFile(r.abs(rel))
	if err != nil {
		return nil, &fileError{file: rel, err: err}
	}
	r.mu.Lock()
	if !r.treesReleased || r.keepContent {
		r.raw[rel] = data
	}
	r.mu.Unlock()
	return data, nil
}

// parseShare is how many parsed nodes planning may hold per node of the render's budget: a
// parsed node (a yaml.Node and its strings) costs a fraction of what a built one costs
// (NodeCost), so that what fits the builds never trips the parses.
const parseShare = 2

// countParsed counts a parsed file's nodes against parseShare times the render's node
// budget: planning holds every file it parsed until the builds start, so eight files of
// 990,000 scalars, each under the limits of a file, took a check past 1.2 GB before the
// apps were weighed (issue 30). The file that takes the parses past it is refused.
func (r *repo) countParsed(file string, nodes int64) error {
	r.mu.Lock()
	released := r.treesReleased
	r.mu.Unlock()
	if r.nodeBudget <= 0 || released {
		return nil // the builds' reads are weighed app by app (keepToBudget)
	}
	if total, limit := r.parsed.Add(nodes), parseShare*r.nodeBudget; total > limit {
		return &fileError{file: file, err: fmt.Errorf("parsing it takes the YAML read so far to %d nodes, aliases expanded: over the %d a render may parse under %s: %w",
			total, limit, r.nodeBudgetFrom, ErrOverBudget)}
	}
	return nil
}

// whyMissing says why a path that is neither a file nor a folder of the repository is
// not one: a symbolic link out of the repository or in a loop, in the filesystem's words
// (wrapping ErrNotFound), else ErrNotFound.
func (r *repo) whyMissing(rel string) error {
	if !r.fsys.Exists(r.abs(rel)) && !isLinkError(r.fsys, r.abs(rel)) {
		return ErrNotFound
	}
	_, err := r.fsys.ReadFile(r.abs(rel))
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	return fmt.Errorf("%w: %s", ErrNotFound, r.relativize(err.Error()))
}

// isLinkError reports whether reading p fails for a symbolic link: a loop.
func isLinkError(fsys filesys.FileSystem, p string) bool {
	_, err := fsys.ReadFile(p)
	return errors.Is(err, syscall.ELOOP)
}

// relativize takes the repository's root out of a message: no host path in messages.
func (r *repo) relativize(msg string) string {
	if r.root == "/" {
		return msg
	}
	return strings.ReplaceAll(msg, r.root+"/", "")
}

// hasFile reports whether rel is a file, from the walk's listing when its folder was
// walked, else by asking the filesystem.
func (r *repo) hasFile(rel string) bool {
	r.mu.Lock()
	walked, listed := r.walked[path.Dir(rel)], r.listed[rel]
	r.mu.Unlock()
	if walked {
		return listed
	}
	return r.isFile(rel)
}

// noteWalk records the folders and files discovery's walk listed.
func (r *repo) noteWalk(dirs, files []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.walked = make(map[string]bool, len(dirs))
	for _, d := range dirs {
		r.walked[d] = true
	}
	r.sortedListed = nil
	r.listed = make(map[string]bool, len(files))
	for _, f := range files {
		r.listed[f] = true
	}
}

func (r *repo) isDir(rel string) bool  { return r.fsys.IsDir(r.abs(rel)) }
func (r *repo) exists(rel string) bool { return r.fsys.Exists(r.abs(rel)) }
func (r *repo) isFile(rel string) bool { return r.exists(rel) && !r.isDir(rel) }

// join resolves ref relative to the repository folder dir. ok is false when the result
// leads out of the repository.
func join(dir, ref string) (string, bool) {
	p := path.Join(dir, ref)
	if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(ref) {
		return p, false
	}
	return p, true
}

// kustomization is one kustomization file, decoded twice: by kustomize's own type (so the
// semantics are kustomize's) and as a YAML node tree (for line numbers).
type kustomization struct {
	// Dir is the repository-relative folder; File the repository-relative file.
	Dir  string
	File string
	// Name is the file's base name (kustomization.yaml, kustomization.yml, Kustomization).
	Name string
	Node *yaml.Node
	K    types.Kustomization
	Raw  []byte
	// Legacy are K's deprecated fields, which olmsync reads to build and to warn.
	Legacy legacyFields
}

// legacyFields are the kustomization fields kustomize deprecates. They are read here and
// only here, so the rest of the package does not touch deprecated API.
type legacyFields struct {
	Bases                 []string
	CommonLabels          map[string]string
	ImageTags             []types.Image
	PatchesJson6902       []types.Patch
	PatchesStrategicMerge []types.PatchStrategicMerge
	Vars                  []types.Var
}

func legacyOf(k *types.Kustomization) legacyFields {
	//nolint:staticcheck // deprecated fields are still built by kustomize; olmsync reports them
	return legacyFields{
		Bases:                 k.Bases,
		CommonLabels:          k.CommonLabels,
		ImageTags:             k.ImageTags,
		PatchesJson6902:       k.PatchesJson6902,
		PatchesStrategicMerge: k.PatchesStrategicMerge,
		Vars:                  k.Vars,
	}
}

// kustomizationAt returns the kustomization in folder dir, or nil when it has none. A
// kustomization that cannot be read is a *YAMLError (or a kustomize error) naming the file.
// Once planning is over, none is kept: the builds read generatorsAt.
func (r *repo) kustomizationAt(dir string) (*kustomization, error) {
	r.mu.Lock()
	released := r.treesReleased
	r.mu.Unlock()
	if released {
		return r.readKustomization(dir)
	}
	return loadOnce(r, r.kusts, dir, func() (*kustomization, error) { return r.readKustomization(dir) })
}

func (r *repo) readKustomization(dir string) (*kustomization, error) {
	var found []string
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if r.hasFile(path.Join(dir, name)) {
			found = append(found, name)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, &YAMLError{File: path.Join(dir, found[0]),
			Msg: fmt.Sprintf("folder %s has more than one kustomization file (%s); kustomize refuses it", dir, strings.Join(found, ", "))}
	}
	file := path.Join(dir, found[0])
	raw, err := r.readFile(file)
	if err != nil {
		return nil, err
	}
	return r.parseKustomization(dir, file, raw)
}

// parseKustomization reads the kustomization raw, the content of file in folder dir.
func (r *repo) parseKustomization(dir, file string, raw []byte) (*kustomization, error) {
	docs, err := decodeDocs(file, raw)
	if err != nil {
		return nil, err
	}
	k := &kustomization{Dir: dir, File: file, Name: path.Base(file), Raw: raw}
	switch {
	case len(docs) == 0:
		return nil, &YAMLError{File: file, Msg: "kustomization is empty"}
	case len(docs) > 1:
		return nil, &YAMLError{File: file, Line: docs[1].Line, Msg: "a kustomization file holds one YAML document; found a second"}
	}
	k.Node = docs[0].Node
	if err := k.K.Unmarshal(raw); err != nil {
		if line, hint, ok := patchesStringHint(k.Node, err); ok {
			return nil, &hintedError{err: &YAMLError{File: file, Line: line, Msg: err.Error()}, hint: hint}
		}
		// kustomize's decoder names the unknown field; the node tree gives its line.
		return nil, &YAMLError{File: file, Line: unknownFieldLine(k.Node, err.Error()), Msg: err.Error()}
	}
	k.Legacy = legacyOf(&k.K)
	return k, nil
}

// generatorIndex is what the builds read of a kustomization: its file, and where its
// generators are written — the line of each generator field and of each of its entries,
// and the names of the configMapGenerator and secretGenerator entries — to trace a
// generated object back to the entry that made it. Planning reads kustomizations whole;
// the builds, during which the rendered objects pile up, hold only this of them (on the
// 300-app benchmark repository, 1.5 MB of kustomizations kept until the last build).
type generatorIndex struct {
	file string
	// line is the kustomization's first line.
	line int
	// fields are configMapGenerator, secretGenerator and generators, those it has.
	fields map[string]generatorEntries
}

// generatorEntries are one generator field of a kustomization.
type generatorEntries struct {
	// line is the field's; lines are its entries'.
	line  int
	lines []int
	// names are the entries' names (configMapGenerator and secretGenerator).
	names []string
}

// generatorFields are the kustomization fields whose entries make objects.
var generatorFields = []string{"configMapGenerator", "secretGenerator", "generators"}

// generators indexes the kustomization's generators.
func (k *kustomization) generators() *generatorIndex {
	g := &generatorIndex{file: k.File, line: lineOf(k.Node)}
	for _, field := range generatorFields {
		key := mapKey(k.Node, field)
		if key == nil {
			continue
		}
		if g.fields == nil {
			g.fields = map[string]generatorEntries{}
		}
		e := generatorEntries{line: key.Line}
		if seq := mapValue(k.Node, field); seq != nil && seq.Kind == yaml.SequenceNode {
			for _, item := range seq.Content {
				e.lines = append(e.lines, item.Line)
			}
		}
		switch field {
		case "configMapGenerator":
			for _, a := range k.K.ConfigMapGenerator {
				e.names = append(e.names, a.Name)
			}
		case "secretGenerator":
			for _, a := range k.K.SecretGenerator {
				e.names = append(e.names, a.Name)
			}
		}
		g.fields[field] = e
	}
	return g
}

// entryLine is the line of entry i of a generator field, else the field's, else the
// kustomization's first line: the closest place a reader can be pointed at (seqItemLine
// on the whole tree).
func (g *generatorIndex) entryLine(field string, i int) int {
	e, ok := g.fields[field]
	switch {
	case ok && i >= 0 && i < len(e.lines):
		return e.lines[i]
	case ok:
		return e.line
	}
	return g.line
}

// generatorsAt returns the generators of the kustomization in folder dir, or nil when it
// has none.
func (r *repo) generatorsAt(dir string) (*generatorIndex, error) {
	return loadOnce(r, r.generators, dir, func() (*generatorIndex, error) {
		k, err := r.kustomizationAt(dir)
		if k == nil {
			return nil, err
		}
		return k.generators(), err
	})
}

// unknownFieldLine finds the line of the field a json "unknown field" error names.
func unknownFieldLine(n *yaml.Node, msg string) int {
	_, rest, ok := strings.Cut(msg, `unknown field "`)
	if !ok {
		return 0
	}
	field, _, _ := strings.Cut(rest, `"`)
	if k := mapKey(n, field); k != nil {
		return k.Line
	}
	return 0
}

// manifestFile is a file of Kubernetes manifests: each document's identity and the line it
// starts on, so a rendered object can be traced back to its document.
type manifestFile struct {
	File string
	Docs []manifestDoc
	// Nodes is how many YAML nodes the file expands to, aliases expanded: what a build
	// that reads it builds (Options.NodeBudget).
	Nodes int64
	// roots are the documents as parsed, List documents whole; nil, as every Docs' Node,
	// in what the cache keeps (manifestsIn): trees is the way to them.
	roots []*yaml.Node
	// marks are where each document's source marker goes in the file's text, when every
	// document can be marked there (textMarks); nil otherwise. Kept with the identities.
	marks []markSpot
	// folded: the file holds a folded scalar (hasFolded), so it is marked in its text or
	// not at all. Kept with the identities.
	folded bool
}

// manifestDoc is one document of a manifest file (or one item of a List document).
type manifestDoc struct {
	Line       int
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
	// Node is the document's tree; nil in what the cache keeps (see manifestFile.roots).
	Node *yaml.Node
}

// identities is the file without its trees: what tracing an object back to its document
// reads.
func (mf *manifestFile) identities() *manifestFile {
	lean := &manifestFile{File: mf.File, Docs: slices.Clone(mf.Docs), Nodes: mf.Nodes, marks: mf.marks, folded: mf.folded}
	for i := range lean.Docs {
		lean.Docs[i].Node = nil
	}
	return lean
}

// releaseTrees ends planning: it keeps of what planning read only what the builds of the
// plans read, and makes later reads keep only that. Planning reads every manifest of
// every app as a tree (to validate it and to find what each app needs) and every
// kustomization whole; the builds need a file's tree once at most (to mark it, or to read
// a plain folder), a kustomization's generators, and the content of the files they mark
// or read; and holding all of it until the last app is built cost more memory than half
// the rendered objects (issue 18). Manifest files keep only their documents' identities
// and lines from the start (manifestsIn); kustomizations keep their generators
// (generatorIndex), and raw the files a build still reads (all of them with keepContent:
// the render cache's digests read every file under an app's folders), each until the last
// build that reads it (see built); the walk's listing goes too, unless the render cache's
// digests list folders from it.
//
// The caller guarantees that nothing reads the repository meanwhile: it runs between the
// planning and the builds.
func (r *repo) releaseTrees(plans []*plan, keepContent bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.treesReleased, r.keepContent = true, keepContent
	for dir, e := range r.kusts {
		g := &onceEntry[*generatorIndex]{}
		g.once.Do(func() {
			if e.val != nil {
				g.val = e.val.generators()
			}
			g.err = e.err
		})
		r.generators[dir] = g
	}
	r.kusts = nil
	if !keepContent {
		// Only reading kustomizations, and the render cache, list folders from the walk.
		r.walked, r.listed, r.sortedListed = nil, nil, nil
	}
	r.uses = map[string]int{}
	for _, p := range plans {
		if p != nil {
			for _, f := range p.reads() {
				r.uses[f]++
			}
		}
	}
	if !keepContent {
		for f := range r.raw {
			if r.uses[f] == 0 {
				delete(r.raw, f)
			}
		}
	}
}

// built lets go of what only the build of p, now over, and builds over before read: the
// content of a file, its marked copy and its documents' identities go with the last build
// that reads them (a build that traces objects by kustomize's origin annotations may
// still read a file's identities: it reads the file again).
func (r *repo) built(p *plan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range p.reads() {
		if r.uses[f]--; r.uses[f] > 0 {
			continue
		}
		delete(r.uses, f)
		delete(r.marked, f)
		delete(r.files, f)
		if !r.keepContent {
			delete(r.raw, f)
		}
	}
}

// trees returns the manifest file with its trees, parsed for the caller, which may change
// them: the cache keeps only its documents' identities (manifestsIn), so a file read this
// way first is parsed once and cached lean, and one read again is parsed again.
func (r *repo) trees(file string) (*manifestFile, error) {
	var parsed *manifestFile
	mf, err := r.cacheIdentities(file, &parsed)
	if err != nil || len(mf.Docs) == 0 {
		return mf, err
	}
	if parsed != nil {
		return parsed, nil
	}
	return r.parseManifests(file)
}

// manifestsIn reads and indexes a manifest file, and keeps its documents' identities and
// lines, not its trees: planning reads every manifest of every app, and holding all their
// trees until the last app was planned was a render's peak on a repository of many apps
// (about 130 MB live for 1,200 apps and 47 MB of YAML). What needs a file's trees (an
// Application to decode, a plugin's config, a plain folder's objects, a file to mark through
// its trees) reads them with trees. Malformed YAML is a *YAMLError.
func (r *repo) manifestsIn(file string) (*manifestFile, error) {
	return r.cacheIdentities(file, nil)
}

// cacheIdentities parses file once and caches its identities (manifestFile.identities);
// when parsed is not nil and this call made the cache entry, it receives the whole parse.
func (r *repo) cacheIdentities(file string, parsed **manifestFile) (*manifestFile, error) {
	return loadOnce(r, r.files, file, func() (*manifestFile, error) {
		mf, err := r.parseManifests(file)
		if err != nil {
			return nil, err
		}
		if parsed != nil {
			*parsed = mf
		}
		return mf.identities(), nil
	})
}

// parseManifests reads and indexes a manifest file, trees included, without caching it.
func (r *repo) parseManifests(file string) (*manifestFile, error) {
	raw, err := r.readFile(file)
	if err != nil {
		return nil, err
	}
	docs, nodes, err := decodeCounted(file, raw)
	if err != nil {
		return nil, err
	}
	if err := r.countParsed(file, nodes); err != nil {
		return nil, err
	}
	mf := &manifestFile{File: file, Nodes: nodes}
	for _, d := range docs {
		mf.Docs = append(mf.Docs, indexDoc(d.Node)...)
		mf.roots = append(mf.roots, d.Node)
	}
	mf.marks = textMarks(raw, mf.roots)
	mf.folded = slices.ContainsFunc(mf.roots, hasFolded)
	return mf, nil
}

// indexDoc records a document's identity. A List document (kind List, or any kind ending
// in "List" with items) contributes its items, as kubectl and kustomize expand it.
func indexDoc(n *yaml.Node) []manifestDoc {
	d := manifestDoc{
		Line:       n.Line,
		APIVersion: scalarAt(n, "apiVersion"),
		Kind:       scalarAt(n, "kind"),
		Name:       scalarAt(n, "metadata", "name"),
		Namespace:  scalarAt(n, "metadata", "namespace"),
		Node:       n,
	}
	if items := mapValue(n, "items"); items != nil && items.Kind == yaml.SequenceNode && strings.HasSuffix(d.Kind, "List") {
		var out []manifestDoc
		for _, it := range items.Content {
			out = append(out, indexDoc(it)...)
		}
		return out
	}
	return []manifestDoc{d}
}

// walkRepo visits every file of the repository except those under .git, giving
// repository-relative paths.
func (r *repo) walkRepo(fn func(rel string, isDir bool) error) error {
	return r.fsys.Walk(r.root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, ok := r.rel(p)
		if !ok {
			return nil
		}
		if info.IsDir() && info.Name() == ".git" {
			return filepath.SkipDir
		}
		return fn(rel, info.IsDir())
	})
}
