package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMaxConcurrentPulls bounds how many images one ImageCache pulls at once.
const DefaultMaxConcurrentPulls = 4

// ImageCache keeps what was extracted from catalog and bundle images on disk, one folder
// per digest, so that an image pulled once is read from disk afterwards. It is bounded:
// when the folders together exceed MaxBytes, the least recently used ones are removed
// (never one being read). It also bounds the pulls: at most MaxPulls images are pulled at
// once, and two loads of one digest pull it once. One ImageCache serves every catalog and
// bundle image of a process; it is safe for concurrent use.
type ImageCache struct {
	dir      string
	maxBytes int64
	pulls    chan struct{}

	mu      sync.Mutex
	entries map[string]*cacheEntry
	total   int64
	filling map[string]*fillCall
}

type cacheEntry struct {
	size int64
	used time.Time
	pins int
}

type fillCall struct {
	done chan struct{}
	err  error
}

// CacheStats is what an ImageCache holds.
type CacheStats struct {
	Entries int
	Bytes   int64
}

// OpenImageCache opens (creating it when missing) the cache folder dir, keeping at most
// maxBytes of extracted content (0: no bound) and pulling at most maxPulls images at once
// (DefaultMaxConcurrentPulls when 0). What an earlier process left there is kept, its
// least recently used order taken from the folders' modification times; half-written
// extractions are removed.
func OpenImageCache(dir string, maxBytes int64, maxPulls int) (*ImageCache, error) {
	if dir == "" {
		return nil, errors.New("image cache: no folder")
	}
	if maxPulls <= 0 {
		maxPulls = DefaultMaxConcurrentPulls
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("image cache: %w", err)
	}
	c := &ImageCache{dir: dir, maxBytes: maxBytes, pulls: make(chan struct{}, maxPulls),
		entries: map[string]*cacheEntry{}, filling: map[string]*fillCall{}}
	list, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("image cache: %w", err)
	}
	for _, e := range list {
		p := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), ".pull-") {
			_ = os.RemoveAll(p)
			continue
		}
		if !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		size, err := dirSize(p)
		if err != nil {
			continue
		}
		c.entries[e.Name()] = &cacheEntry{size: size, used: info.ModTime()}
		c.total += size
	}
	c.mu.Lock()
	c.evictLocked()
	c.mu.Unlock()
	return c, nil
}

// Dir is the cache's folder.
func (c *ImageCache) Dir() string { return c.dir }

// Stats says how much the cache holds.
func (c *ImageCache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Entries: len(c.entries), Bytes: c.total}
}

// Has reports whether the cache holds key, without using it.
func (c *ImageCache) Has(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[key]
	return ok
}

// acquire pins the folder of key, if the cache holds it, and marks it used. The folder is
// not removed until release is called.
func (c *ImageCache) acquire(key string) (dir string, release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return "", nil, false
	}
	return c.pinLocked(key, e), c.releaser(key), true
}

func (c *ImageCache) pinLocked(key string, e *cacheEntry) string {
	e.pins++
	e.used = time.Now()
	dir := filepath.Join(c.dir, key)
	// The modification time carries the order of use over to the next process.
	_ = os.Chtimes(dir, e.used, e.used)
	return dir
}

func (c *ImageCache) releaser(key string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if e, ok := c.entries[key]; ok && e.pins > 0 {
				e.pins--
			}
			c.evictLocked()
		})
	}
}

// fill returns the folder of key, pinned, extracting it with extract (into an empty
// folder it is given) when the cache does not hold it. Two fills of one key extract once;
// at most MaxPulls extractions run at once. cached is true when nothing was extracted.
func (c *ImageCache) fill(ctx context.Context, key string, extract func(dir string) error) (dir string, release func(), cached bool, err error) {
	for {
		c.mu.Lock()
		if e, ok := c.entries[key]; ok {
			dir := c.pinLocked(key, e)
			c.mu.Unlock()
			return dir, c.releaser(key), true, nil
		}
		if call, ok := c.filling[key]; ok {
			c.mu.Unlock()
			select {
			case <-call.done:
			case <-ctx.Done():
				return "", nil, false, ctx.Err()
			}
			if call.err != nil {
				return "", nil, false, call.err
			}
			continue // the other fill put it in the cache (or it was evicted at once)
		}
		call := &fillCall{done: make(chan struct{})}
		c.filling[key] = call
		c.mu.Unlock()

		dir, release, err := c.extractInto(ctx, key, extract)
		c.mu.Lock()
		delete(c.filling, key)
		c.mu.Unlock()
		call.err = err
		close(call.done)
		return dir, release, false, err
	}
}

func (c *ImageCache) extractInto(ctx context.Context, key string, extract func(dir string) error) (string, func(), error) {
	select {
	case c.pulls <- struct{}{}:
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
	defer func() { <-c.pulls }()
	tmp, err := os.MkdirTemp(c.dir, ".pull-")
	if err != nil {
		return "", nil, fmt.Errorf("image cache: %w", err)
	}
	if err := extract(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return "", nil, err
	}
	size, err := dirSize(tmp)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return "", nil, fmt.Errorf("image cache: %w", err)
	}
	dir := filepath.Join(c.dir, key)
	c.mu.Lock()
	defer c.mu.Unlock()
	// The rename publishes the complete extraction at once. A folder already there (left
	// by a process that did not know it) is the same content: keep it.
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.RemoveAll(tmp)
		if _, statErr := os.Stat(dir); statErr != nil {
			return "", nil, fmt.Errorf("image cache: %w", err)
		}
		if size, err = dirSize(dir); err != nil {
			return "", nil, fmt.Errorf("image cache: %w", err)
		}
	}
	if old, ok := c.entries[key]; ok {
		c.total -= old.size
	}
	e := &cacheEntry{size: size}
	c.entries[key] = e
	c.total += size
	pinned := c.pinLocked(key, e)
	c.evictLocked()
	return pinned, c.releaser(key), nil
}

// evictLocked removes the least recently used folders nobody reads until the cache is
// within its bound.
func (c *ImageCache) evictLocked() {
	if c.maxBytes <= 0 || c.total <= c.maxBytes {
		return
	}
	keys := make([]string, 0, len(c.entries))
	for k := range c.entries {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return c.entries[a].used.Compare(c.entries[b].used) })
	for _, k := range keys {
		if c.total <= c.maxBytes {
			return
		}
		e := c.entries[k]
		if e.pins > 0 {
			continue
		}
		if err := os.RemoveAll(filepath.Join(c.dir, k)); err != nil {
			continue
		}
		delete(c.entries, k)
		c.total -= e.size
	}
}

// dirSize is the size of the regular files below dir.
func dirSize(dir string) (int64, error) {
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			size += info.Size()
		}
		return nil
	})
	return size, err
}
