package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Cache keeps built apps by the digest of their inputs, so that a second render of the
// same inputs (a pull request's base and head: most apps are the same in both) builds each
// only once. An app's inputs are every file under each folder its kustomization includes,
// transitively (the include graph), or the files of a plain folder, with the app's own
// settings and the render options; an app whose build can reach past the repository
// (remote bases, plugins, Helm) is never cached. Only successful builds are kept. A Cache
// is safe for concurrent use; the zero value is not, use NewCache.
type Cache struct {
	mu      sync.Mutex
	entries map[string][]*Object
	// plans are, by app, what its last cached build was planned from (memory only): a
	// later render whose files under those folders are the same takes the build without
	// planning the app again.
	plans map[string]planEntry
	// dir, when set, keeps entries on disk too, for the next process (NewDiskCache).
	dir string
	// version is olmsync's version: an entry another version wrote is another key.
	version string
	// Hits and Misses count lookups, for tests and benchmarks; Reused counts the apps taken
	// without being planned again.
	Hits, Misses, Reused atomic.Int64
}

// NewCache returns an empty cache held in memory.
func NewCache() *Cache { return &Cache{entries: map[string][]*Object{}, plans: map[string]planEntry{}} }

// NewDiskCache returns a cache that also keeps its entries in dir (created when missing),
// one file per app build named by its key, so that the next run — the next CI job with the
// folder restored — builds only the apps whose inputs changed. version (olmsync's) is part
// of every key. The folder must be trusted as the repository is: an entry is taken as the
// build it stands for.
func NewDiskCache(dir, version string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("render cache: %w", err)
	}
	return &Cache{entries: map[string][]*Object{}, plans: map[string]planEntry{}, dir: dir, version: version}, nil
}

// maxEntryBytes bounds a cache file read back: a larger one is taken for a miss before it
// is read (a 1 GB entry was read whole, 844 MB, before it was found wrong: issue 30). The
// largest app of the repositories measured renders to under 4 MB of JSON.
const maxEntryBytes = 64 << 20

// cacheVersion changes whenever what a build makes of the same inputs changes.
const cacheVersion = "olmsync-render-cache/v1"

func (c *Cache) get(key string) ([]*Object, bool) {
	if c == nil || key == "" {
		return nil, false
	}
	c.mu.Lock()
	objs, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		objs, ok = c.readEntry(key)
	}
	if !ok {
		c.Misses.Add(1)
		return nil, false
	}
	c.Hits.Add(1)
	return cloneObjects(objs), true
}

func (c *Cache) put(key string, objs []*Object) {
	if c == nil || key == "" {
		return
	}
	c.mu.Lock()
	c.entries[key] = cloneObjects(objs)
	c.mu.Unlock()
	c.writeEntry(key, objs)
}

// entryPath is where an entry lives on disk.
func (c *Cache) entryPath(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// readEntry reads an entry from disk; a missing, unreadable or foreign file is a miss.
func (c *Cache) readEntry(key string) ([]*Object, bool) {
	if c.dir == "" {
		return nil, false
	}
	f, err := os.Open(c.entryPath(key))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > maxEntryBytes {
		return nil, false
	}
	var e diskEntry
	dec := json.NewDecoder(io.LimitReader(f, maxEntryBytes))
	if err := dec.Decode(&e); err != nil || e.Key != key {
		return nil, false
	}
	for _, o := range e.Objects {
		if o == nil || o.Manifest == nil {
			return nil, false
		}
	}
	c.mu.Lock()
	c.entries[key] = e.Objects
	c.mu.Unlock()
	return e.Objects, true
}

// writeEntry writes an entry to disk, atomically (a temporary file renamed): a reader
// never sees half an entry. A failed write only costs the next run a build.
func (c *Cache) writeEntry(key string, objs []*Object) {
	if c.dir == "" {
		return
	}
	b, err := json.Marshal(diskEntry{Key: key, Objects: objs})
	if err != nil {
		return
	}
	p := c.entryPath(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".entry-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// diskEntry is a cache file: its key (a renamed file is not taken) and the objects.
type diskEntry struct {
	Key     string    `json:"key"`
	Objects []*Object `json:"objects"`
}

// cloneObjects copies objects deeply enough that the render that takes them (which settles
// their namespaces) and a later post-build change nothing the cache holds.
func cloneObjects(objs []*Object) []*Object {
	out := make([]*Object, len(objs))
	for i, o := range objs {
		cp := *o
		cp.Manifest = o.Manifest.DeepCopy()
		out[i] = &cp
	}
	return out
}

// cacheable reports whether builds may be cached at all. Decrypted objects are never
// cached (the cache may be written to disk), nor builds that can reach past the repository.
func (b *builder) cacheable() bool {
	o := b.opts
	return o.Cache != nil && o.Decryption == nil && !o.AllowRemoteBases && !o.EnableExecPlugins && !o.EnableContainerPlugins && !o.EnableHelm
}

// cacheKey is the digest of an app's inputs; "" when the app must not be cached.
func (b *builder) cacheKey(p *plan) string {
	if !b.cacheable() {
		return ""
	}
	if p.kustFile == "" {
		return b.digest(p.app, slices.Clone(p.files))
	}
	files, ok := b.filesUnderAll(slices.Collect(maps.Keys(p.folders)))
	if !ok {
		return ""
	}
	return b.digest(p.app, files)
}

// digest is the digest of an app's settings, the render's version and the given files'
// names and contents; "" when one cannot be read.
func (b *builder) digest(app *App, files []string) string {
	h := sha256.New()
	write := func(part []byte) { // each part, then a NUL
		h.Write(part)
		h.Write([]byte{0})
	}
	settings, err := json.Marshal(app)
	if err != nil {
		return ""
	}
	write([]byte(cacheVersion))
	write([]byte(b.opts.Cache.version))
	write(settings)
	slices.Sort(files)
	for _, f := range files {
		data, err := b.r.readFile(f)
		if err != nil {
			return ""
		}
		// The file's bytes as they are: a string of them would copy every file an app
		// reads, shared bases once per app.
		write([]byte(f))
		write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// filesUnderAll lists every file under the folders, each once.
func (b *builder) filesUnderAll(folders []string) ([]string, bool) {
	seen := map[string]bool{}
	var files []string
	for _, dir := range folders {
		under, ok := b.r.filesUnder(dir)
		if !ok {
			return nil, false
		}
		for _, f := range under {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	return files, true
}

// planEntry is what an app's cached build was planned from: the folders its inputs are in
// (the include graph's, or a plain folder), the digest of every file under them (inputs;
// for a kustomization the build's own key), the build's key, and what planning said
// (warnings, the file build errors name).
type planEntry struct {
	folders  []string
	inputs   string
	key      string
	warnings []Diagnostic
	file     string
}

// planKey is an app's entry in Cache.plans: its settings and the render's version.
func (b *builder) planKey(app *App) string {
	return b.digest(app, nil)
}

// remember records the plan of a build just cached under key.
func (b *builder) remember(p *plan, key string) {
	e := planEntry{key: key, warnings: slices.Clone(p.warnings), file: p.file(), inputs: key}
	if p.kustFile == "" {
		// The key covers the manifest files planning found; a file added beside them must
		// make the next render plan again, so inputs covers everything under the folder.
		e.folders = []string{p.app.Path}
		files, ok := b.filesUnderAll(e.folders)
		if !ok {
			return
		}
		e.inputs = b.digest(p.app, files)
	} else {
		e.folders = slices.Sorted(maps.Keys(p.folders))
	}
	if e.inputs == "" {
		return
	}
	c := b.opts.Cache
	k := b.planKey(p.app)
	c.mu.Lock()
	c.plans[k] = e
	c.mu.Unlock()
}

// reuse takes an app's build from the cache without planning it, when an earlier render
// with this Cache built it and every file under the folders its inputs were in is the same
// (names and contents: a file added or removed there changes the digest too). It returns
// the objects and the warnings its planning gave.
func (b *builder) reuse(app *App) ([]*Object, *planEntry, bool) {
	if !b.cacheable() {
		return nil, nil, false
	}
	c := b.opts.Cache
	c.mu.Lock()
	e, ok := c.plans[b.planKey(app)]
	c.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	files, ok := b.filesUnderAll(e.folders)
	if !ok || b.digest(app, files) != e.inputs {
		return nil, nil, false
	}
	objs, ok := c.get(e.key)
	if !ok {
		return nil, nil, false
	}
	c.Reused.Add(1)
	return objs, &e, true
}

// filesUnder lists the files below a folder (all depths, .git left out), repository-
// relative; false when the folder cannot be listed (then nothing is cached). It reads
// discovery's walk of the repository when there was one, so that apps sharing bases do
// not walk them again; else it walks the folder.
func (r *repo) filesUnder(dir string) ([]string, bool) {
	if files, ok := r.listedUnder(dir); ok {
		return files, true
	}
	var out []string
	err := r.fsys.Walk(r.abs(dir), func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			if info.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		rel, ok := r.rel(p)
		if !ok || strings.HasPrefix(rel, "../") {
			return nil
		}
		out = append(out, path.Clean(rel))
		return nil
	})
	return out, err == nil
}

// listedUnder is filesUnder from discovery's listing: a range of its files, sorted once.
func (r *repo) listedUnder(dir string) ([]string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.listed == nil || !r.walked[dir] {
		return nil, false
	}
	if r.sortedListed == nil {
		r.sortedListed = slices.Sorted(maps.Keys(r.listed))
	}
	if dir == "." || dir == "" {
		return slices.Clone(r.sortedListed), true
	}
	prefix := dir + "/"
	i, _ := slices.BinarySearch(r.sortedListed, prefix)
	j := i
	for j < len(r.sortedListed) && strings.HasPrefix(r.sortedListed[j], prefix) {
		j++
	}
	return slices.Clone(r.sortedListed[i:j]), true
}
