package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/render/rendertest"
)

// TestCacheBuildsSameInputsOnce: rendering a repository, then a copy with one app changed,
// through one Cache builds only that app again, and every result equals a render without
// the cache; a byte changed in a shared base rebuilds every app that includes it (a stale
// entry is never used).
func TestCacheBuildsSameInputsOnce(t *testing.T) {
	shape := rendertest.Shape{Clusters: 2, AppsPerCluster: 3}
	files := shape.Files()
	render := func(fs map[string]string, c *Cache) *Result {
		fsys, root := memRepo(t, fs)
		return renderRepo(t, fsys, root, Options{Cache: c})
	}
	c := NewCache()
	first := render(files, c)
	apps := len(first.Apps)
	if c.Hits.Load() != 0 || c.Misses.Load() != int64(apps) {
		t.Fatalf("first render: %d hits, %d misses; want 0, %d", c.Hits.Load(), c.Misses.Load(), apps)
	}

	// Change one app's own file.
	changed := map[string]string{}
	for k, v := range files {
		changed[k] = v
	}
	var edited string
	for _, a := range first.Apps {
		if !a.ClusterScope {
			edited = a.Path
			break
		}
	}
	overlay := ""
	for k := range files {
		if len(k) > len(edited) && k[:len(edited)+1] == edited+"/" && k != edited+"/kustomization.yaml" {
			overlay = k
			break
		}
	}
	if overlay == "" {
		t.Fatalf("no file of its own in app %s", edited)
	}
	changed[overlay] = files[overlay] + "\n# a comment changes the bytes, not the objects\n"
	c.Hits.Store(0)
	c.Misses.Store(0)
	second := render(changed, c)
	if c.Misses.Load() != 1 || c.Hits.Load() != int64(apps-1) {
		t.Errorf("one app changed: %d hits, %d misses; want %d, 1", c.Hits.Load(), c.Misses.Load(), apps-1)
	}
	if diff := cmp.Diff(objectsOf(render(changed, nil)), objectsOf(second)); diff != "" {
		t.Errorf("cached render differs from a fresh one (-fresh +cached):\n%s", diff)
	}

	// A byte of a shared base: every app that includes it is built again.
	const base = "cluster-scope/base/olm.yaml" // every cluster-scope app includes it
	if _, ok := files[base]; !ok {
		t.Fatalf("the generated repository has no %s", base)
	}
	changed[base] = files[base] + "\n"
	c.Hits.Store(0)
	c.Misses.Store(0)
	render(changed, c)
	if c.Misses.Load() != int64(shape.Clusters) || c.Hits.Load() != int64(apps-shape.Clusters) {
		t.Errorf("the cluster-scope base changed: %d hits, %d misses; want %d, %d (each cluster-scope app built again)",
			c.Hits.Load(), c.Misses.Load(), apps-shape.Clusters, shape.Clusters)
	}
}

// objectsOf lists each app's objects with their provenance, for comparing renders.
func objectsOf(r *Result) map[string][]string {
	out := map[string][]string{}
	for _, a := range r.Apps {
		for _, o := range a.Objects {
			b, _ := o.Manifest.MarshalJSON()
			out[a.Name] = append(out[a.Name], o.Source.File+":"+strconv.Itoa(o.Source.Line)+" "+o.EffectiveNamespace+" "+string(b))
		}
	}
	return out
}

// TestDiskCache: a second process (a new Cache on the same folder) takes every build from
// disk and renders the same; a changed byte rebuilds that app; a corrupt or foreign entry,
// or another olmsync version, is a miss, never an error or a wrong build.
func TestDiskCache(t *testing.T) {
	shape := rendertest.Shape{Clusters: 1, AppsPerCluster: 2}
	files := shape.Files()
	dir := t.TempDir()
	render := func(fs map[string]string, version string) (*Result, *Cache) {
		c, err := NewDiskCache(dir, version)
		if err != nil {
			t.Fatal(err)
		}
		fsys, root := memRepo(t, fs)
		return renderRepo(t, fsys, root, Options{Cache: c}), c
	}
	fresh, first := render(files, "v1")
	apps := int64(len(fresh.Apps))
	if first.Misses.Load() != apps {
		t.Fatalf("first run: %d misses, want %d", first.Misses.Load(), apps)
	}
	again, second := render(files, "v1")
	if second.Hits.Load() != apps || second.Misses.Load() != 0 {
		t.Errorf("second run: %d hits, %d misses; want %d, 0", second.Hits.Load(), second.Misses.Load(), apps)
	}
	if diff := cmp.Diff(objectsOf(fresh), objectsOf(again)); diff != "" {
		t.Errorf("render from disk differs (-built +cached):\n%s", diff)
	}

	if _, other := render(files, "v2"); other.Hits.Load() != 0 {
		t.Errorf("another version took %d entries", other.Hits.Load())
	}

	// Corrupt every entry: each is built again, and the result is right.
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			return os.WriteFile(p, []byte(`{"key":"x","objects":[null]}`), 0o644)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, third := render(files, "v1")
	if third.Hits.Load() != 0 {
		t.Errorf("corrupt entries taken: %d hits", third.Hits.Load())
	}
	if diff := cmp.Diff(objectsOf(fresh), objectsOf(rebuilt)); diff != "" {
		t.Errorf("render after corrupt entries differs:\n%s", diff)
	}
	// One byte of one input changed: that app is built, the others come from disk.
	changed := maps.Clone(files)
	changed["cluster-scope/base/olm.yaml"] += "\n"
	_, fourth := render(changed, "v1")
	if fourth.Misses.Load() != 1 || fourth.Hits.Load() != apps-1 {
		t.Errorf("one input changed: %d hits, %d misses; want %d, 1", fourth.Hits.Load(), fourth.Misses.Load(), apps-1)
	}
}

// TestCacheReusesUnchangedAppsUnplanned: a second render with the same Cache takes every
// app whose files are unchanged without planning it again (Cache.Reused), with the same
// objects and the warnings its planning gave; a file added beside a plain folder's
// manifests, a file added under a kustomization's include graph and a changed byte in a
// shared base each make that app planned and built again, never taken stale.
func TestCacheReusesUnchangedAppsUnplanned(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  k: v\n"
	}
	files := files{
		"olmsync.yaml":             "apps:\n- {name: k, path: k, namespace: ns}\n- {name: plain, path: plain, namespace: ns}\n",
		"k/kustomization.yaml":     "bases:\n- ../base\n", // deprecated: a planning warning
		"base/kustomization.yaml":  "resources:\n- cm.yaml\n",
		"base/cm.yaml":             cm("from-base"),
		"plain/cm.yaml":            cm("plain"),
		"elsewhere/unrelated.yaml": cm("unrelated"),
	}
	c := NewCache()
	render := func(fs map[string]string, cache *Cache) *Result {
		fsys, root := memRepo(t, fs)
		return renderRepo(t, fsys, root, Options{Cache: cache})
	}
	step := func(name string, fs map[string]string, wantReused int64) *Result {
		t.Helper()
		c.Reused.Store(0)
		got := render(fs, c)
		if c.Reused.Load() != wantReused {
			t.Errorf("%s: %d apps reused unplanned, want %d", name, c.Reused.Load(), wantReused)
		}
		fresh := render(fs, nil)
		if diff := cmp.Diff(objectsOf(fresh), objectsOf(got)); diff != "" {
			t.Errorf("%s: cached render differs from a fresh one (-fresh +cached):\n%s", name, diff)
		}
		if diff := cmp.Diff(fresh.Warnings, got.Warnings); diff != "" {
			t.Errorf("%s: warnings differ from a fresh render's (-fresh +cached):\n%s", name, diff)
		}
		return got
	}
	first := step("first render", files, 0)
	if len(first.Warnings) == 0 {
		t.Fatal("no planning warning for bases: the test would not see a lost one")
	}
	step("same files", files, 2)
	step("a file outside both apps", with(files, "elsewhere/new.yaml", cm("new")), 2)

	added := with(files, "plain/extra.yaml", cm("extra"))
	got := step("a manifest added to the plain folder", added, 1)
	if n := len(appNamed(t, got, "plain").Objects); n != 2 {
		t.Errorf("plain folder after a file was added: %d objects, want 2", n)
	}
	step("a file added under the include graph", with(added, "base/notes.txt", "not a manifest\n"), 1)

	changed := with(added, "base/cm.yaml", cm("from-base-changed"))
	got = step("a byte changed in the base", changed, 1)
	if name := appNamed(t, got, "k").Objects[0].Manifest.GetName(); name != "from-base-changed" {
		t.Errorf("app k after its base changed: %s, want from-base-changed", name)
	}
}

// with is a copy of fs with one file set.
func with(fs map[string]string, path, content string) map[string]string {
	out := maps.Clone(fs)
	out[path] = content
	return out
}

// TestDiskCacheRefusesAnOversizedEntry: a cache entry over maxEntryBytes was read whole
// (a 1 GB file, 844 MB of memory) before it was found wrong (issue 30). It is a miss before
// a byte of it is read.
func TestDiskCacheRefusesAnOversizedEntry(t *testing.T) {
	dir := t.TempDir()
	c, err := NewDiskCache(dir, "v1")
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("ab", 32)
	p := c.entryPath(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// One string of 80 MiB: JSON a decoder has to hold whole before it can refuse it.
	if _, err := f.WriteString(`{"key":"` + key + `","objects":[{"manifest":{"x":"` + strings.Repeat("a", maxEntryBytes+16<<20) + `"}}]}`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if objs, ok := c.readEntry(key); ok || objs != nil {
		t.Fatal("an oversized entry was taken")
	}
	runtime.ReadMemStats(&after)
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 16<<20 {
		t.Errorf("reading the oversized entry allocated %d MB", allocated>>20)
	}
}

// TestDigestIsItsInputsInOrder: an app's cache key is the SHA-256 of the cache's format
// version, olmsync's version, the app's settings as JSON, then each file's path and bytes,
// sorted by path, each part followed by a NUL. Keys kept in a --cache-dir folder by an
// earlier run stay valid only while this holds.
func TestDigestIsItsInputsInOrder(t *testing.T) {
	fsys, root := memRepo(t, files{"app/b.yaml": "b: 1\n", "app/a.yaml": "a: 1\n"})
	r, d := discoverIn(t, fsys, root)
	opts := Options{Cache: &Cache{version: "v9"}}
	b := &builder{r: r, opts: &opts}
	app := &d.Apps[0]

	want := sha256.New()
	settings, err := json.Marshal(app)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{cacheVersion, "v9", string(settings), "app/a.yaml", "a: 1\n", "app/b.yaml", "b: 1\n"} {
		want.Write([]byte(part))
		want.Write([]byte{0})
	}
	if got := b.digest(app, []string{"app/b.yaml", "app/a.yaml"}); got != hex.EncodeToString(want.Sum(nil)) {
		t.Errorf("digest = %s, want the hash of its inputs in order", got)
	}
	if b.digest(app, []string{"app/missing.yaml"}) != "" {
		t.Error("the digest of a file that cannot be read is not empty")
	}
}
