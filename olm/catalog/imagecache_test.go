package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/olmsync/olmsync/internal/ocitest"
)

// writeN is an extraction writing n bytes.
func writeN(n int) func(string) error {
	return func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "data"), []byte(strings.Repeat("x", n)), 0o644)
	}
}

func fillOnce(t *testing.T, c *ImageCache, key string, n int) (cached bool) {
	t.Helper()
	_, release, cached, err := c.fill(context.Background(), key, writeN(n))
	if err != nil {
		t.Fatal(err)
	}
	release()
	return cached
}

// TestImageCacheLRU: the cache stays within its bound by removing the least recently used
// entries, never one being read, and a new process finds the order where the old one left it.
func TestImageCacheLRU(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenImageCache(dir, 250, 1)
	if err != nil {
		t.Fatal(err)
	}
	fillOnce(t, c, "a", 100)
	time.Sleep(10 * time.Millisecond) // modification times order the entries on disk
	fillOnce(t, c, "b", 100)
	time.Sleep(10 * time.Millisecond)
	if !fillOnce(t, c, "a", 100) {
		t.Fatal("a second fill of a extracted again")
	}
	time.Sleep(10 * time.Millisecond)
	fillOnce(t, c, "c", 100) // 300 > 250: b, the least recently used, goes
	if c.Has("b") || !c.Has("a") || !c.Has("c") {
		t.Errorf("after c: has a %v, b %v, c %v; want b evicted", c.Has("a"), c.Has("b"), c.Has("c"))
	}
	if s := c.Stats(); s.Bytes != 200 || s.Entries != 2 {
		t.Errorf("stats %+v, want 2 entries of 200 bytes", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("b's folder is still on disk: %v", err)
	}

	// An entry being read is not removed, even when it is the oldest.
	_, releaseA, ok := c.acquire("a")
	if !ok {
		t.Fatal("a is not in the cache")
	}
	time.Sleep(10 * time.Millisecond)
	_, releaseC, _ := c.acquire("c")
	releaseC()
	time.Sleep(10 * time.Millisecond)
	fillOnce(t, c, "d", 100) // a is older than c but pinned: c goes
	if !c.Has("a") || c.Has("c") || !c.Has("d") {
		t.Errorf("with a pinned: has a %v, c %v, d %v; want c evicted", c.Has("a"), c.Has("c"), c.Has("d"))
	}
	releaseA()

	// A new process: the entries and their order survive, half-written pulls do not.
	if err := os.Mkdir(filepath.Join(dir, ".pull-123"), 0o755); err != nil {
		t.Fatal(err)
	}
	again, err := OpenImageCache(dir, 150, 1)
	if err != nil {
		t.Fatal(err)
	}
	if again.Has("a") || !again.Has("d") {
		t.Errorf("reopened with a smaller bound: has a %v, d %v; want the older a evicted", again.Has("a"), again.Has("d"))
	}
	if _, err := os.Stat(filepath.Join(dir, ".pull-123")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a half-written pull survived the reopen")
	}
}

// TestImageCachePulls: concurrent fills of one key extract once; fills of different keys
// run at most maxPulls at a time; a failed extraction leaves nothing behind.
func TestImageCachePulls(t *testing.T) {
	c, err := OpenImageCache(t.TempDir(), 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	var running, most, extractions atomic.Int64
	slow := func(dir string) error {
		extractions.Add(1)
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		running.Add(-1)
		return writeN(10)(dir)
	}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			key := []string{"x", "y", "z", "w"}[i%4]
			_, release, _, err := c.fill(context.Background(), key, slow)
			if err != nil {
				t.Error(err)
				return
			}
			release()
		})
	}
	wg.Wait()
	if extractions.Load() != 4 {
		t.Errorf("%d extractions for 4 keys", extractions.Load())
	}
	if most.Load() > 2 {
		t.Errorf("%d extractions ran at once, want at most 2", most.Load())
	}
	boom := errors.New("boom")
	if _, _, _, err := c.fill(context.Background(), "bad", func(string) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("failed extraction: %v", err)
	}
	if c.Has("bad") {
		t.Error("a failed extraction is in the cache")
	}
	entries, _ := os.ReadDir(c.Dir())
	if len(entries) != 4 {
		t.Errorf("%d folders in the cache, want 4 (no leftovers of the failed one)", len(entries))
	}
}

// TestExtractLayers: layers stack as a container runtime stacks them — an upper layer's
// file wins, a whiteout removes a lower file, an opaque folder hides the lower folder's
// files — and only the bundle's two folders are written.
func TestExtractLayers(t *testing.T) {
	lower := ocitest.Files(t, map[string][]byte{
		"manifests/a.yaml":   []byte("lower a"),
		"manifests/b.yaml":   []byte("lower b"),
		"metadata/old.yaml":  []byte("old"),
		"etc/passwd":         []byte("not the bundle's"),
		"metadata/keep.yaml": []byte("keep"),
	}, nil)
	upper := ocitest.Files(t, map[string][]byte{
		"manifests/a.yaml":          []byte("upper a"),
		"manifests/.wh.b.yaml":      nil,
		"metadata/.wh..wh..opq":     nil,
		"metadata/annotations.yaml": []byte("upper annotations"),
	}, nil)
	upperLayers, err := upper.Layers()
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(lower, upperLayers...)
	if err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	n, err := extractLayers(img, bundleImageFolders, dest, 1<<20, 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	_ = filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dest, p)
			data, _ := os.ReadFile(p)
			got[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	want := map[string]string{"manifests/a.yaml": "upper a", "metadata/annotations.yaml": "upper annotations"}
	if n != 2 || len(got) != len(want) || got["manifests/a.yaml"] != want["manifests/a.yaml"] || got["metadata/annotations.yaml"] != want["metadata/annotations.yaml"] {
		t.Errorf("extracted %d files: %v, want %v", n, got, want)
	}
	if _, err := extractLayers(img, bundleImageFolders, t.TempDir(), 5, 100); err == nil || !strings.Contains(err.Error(), "larger than 5 bytes") {
		t.Errorf("size bound: %v", err)
	}
	if _, err := extractLayers(lower, bundleImageFolders, t.TempDir(), 1<<20, 2); err == nil || !strings.Contains(err.Error(), "more than 2 files") {
		t.Errorf("file bound: %v", err)
	}
}
