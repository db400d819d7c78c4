package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	// Hits and Misses count lookups, for tests and benchmarks.
	Hits, Misses atomic.Int64
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[string][]*Object{}} }

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

// cacheKey is the digest of an app's inputs; "" when the app must not be cached.
func (b *builder) cacheKey(p *plan) string {
	if b.opts.Cache == nil || b.opts.AllowRemoteBases || b.opts.EnableExecPlugins || b.opts.EnableContainerPlugins || b.opts.EnableHelm {
		return ""
	}
	h := sha256.New()
	write := func(parts ...string) {
		for _, s := range parts {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
	}
	app, err := json.Marshal(p.app)
	if err != nil {
		return ""
	}
	write(cacheVersion, string(app))
	var files []string
	if p.kust == nil {
		files = slices.Clone(p.files)
	} else {
		seen := map[string]bool{}
		for _, dir := range slices.Sorted(maps.Keys(p.folders)) {
			under, ok := b.r.filesUnder(dir)
			if !ok {
				return ""
			}
			for _, f := range under {
				if !seen[f] {
					seen[f] = true
					files = append(files, f)
				}
			}
		}
	}
	slices.Sort(files)
	for _, f := range files {
		data, err := b.r.readFile(f)
		if err != nil {
			return ""
		}
		write(f, string(data))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// filesUnder lists the files below a folder (all depths, .git left out), repository-
// relative; false when the folder cannot be listed (then nothing is cached).
func (r *repo) filesUnder(dir string) ([]string, bool) {
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
