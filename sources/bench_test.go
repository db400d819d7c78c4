package sources

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/gittest"
)

const (
	benchApps         = 300
	benchFilesPerApp  = 10
	benchManifestSize = 1024
)

// benchRepo is a repository shaped like a GitOps one: 300 apps of ten
// manifests of about 1 KiB each, 3,000 files in all, in one commit whose
// objects are loose, as right after committing.
func benchRepo(b *testing.B) string {
	b.Helper()
	files := make(map[string]string, benchApps*benchFilesPerApp)
	for a := range benchApps {
		for f := range benchFilesPerApp {
			body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-%d-%d\ndata:\n  k: %q\n",
				a, f, strings.Repeat("v", benchManifestSize))
			files[fmt.Sprintf("apps/app-%03d/manifest-%d.yaml", a, f)] = body
		}
	}
	return newRepo(b, files)
}

// packedBenchRepo is benchRepo after `git gc`: objects in a pack, as in a
// clone or the fetch cache.
func packedBenchRepo(b *testing.B) string {
	b.Helper()
	repo := benchRepo(b)
	gittest.Git(b, repo, "gc", "-q")
	return repo
}

// BenchmarkOpenRevision reads a commit of 3,000 files from the object store
// into memory, as `check --ref` and every fetch do.
func BenchmarkOpenRevision(b *testing.B) {
	for name, make := range map[string]func(*testing.B) string{"loose": benchRepo, "packed": packedBenchRepo} {
		b.Run(name, func(b *testing.B) {
			repo := make(b)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := OpenRevision(repo, "HEAD", Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpenWorkTree opens the same repository's working tree: the cost
// is git status (is it dirty?), since files are read only when asked for.
func BenchmarkOpenWorkTree(b *testing.B) {
	repo := benchRepo(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := OpenWorkTree(repo, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadEveryFile walks each kind of tree and reads every file
// through the confined filesystem, as a renderer discovering apps would.
func BenchmarkReadEveryFile(b *testing.B) {
	repo := benchRepo(b)
	work, err := OpenWorkTree(repo, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	rev, err := OpenRevision(repo, "HEAD", Limits{})
	if err != nil {
		b.Fatal(err)
	}
	for name, tree := range map[string]*Tree{"worktree": work, "revision": rev} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				err := tree.FS.Walk(tree.Root, func(p string, info fs.FileInfo, err error) error {
					if err != nil || info.IsDir() {
						return err
					}
					_, err = tree.FS.ReadFile(p)
					n++
					return err
				})
				if err != nil || n != benchApps*benchFilesPerApp {
					b.Fatalf("read %d files: %v", n, err)
				}
			}
		})
	}
}

// BenchmarkFetchUpToDate is one poll of an unchanged remote branch: list the
// server's refs, find the commit already cached, read it into memory.
func BenchmarkFetchUpToDate(b *testing.B) {
	repo := benchRepo(b)
	cache := b.TempDir()
	req := FetchRequest{URL: "file://" + repo, CacheDir: cache}
	if _, err := Fetch(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Fetch(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
