package sources

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/olmsync/olmsync/internal/gittest"
)

// TestRevisionsShareBlobs: two revisions opened with one Blobs, at once, hold each file
// they have in common once — the same bytes — and each its own content of the files that
// differ; a file over the size bound is its size alone in both. Opened without Blobs,
// nothing is shared.
func TestRevisionsShareBlobs(t *testing.T) {
	big := strings.Repeat("x", 2048)
	repo := newRepo(t, map[string]string{"app/a.yaml": "a: 1\n", "app/b.yaml": "b: 1\n", "big.txt": big})
	base := gittest.Git(t, repo, "rev-parse", "HEAD")
	head := commitFiles(t, repo, map[string]string{"app/b.yaml": "b: 2\n"}, "change b")
	lim := Limits{MaxFileSize: 1024}

	open := func(blobs *Blobs) (*Tree, *Tree) {
		var trees [2]*Tree
		var wg sync.WaitGroup
		for i, rev := range []string{base, head} {
			wg.Go(func() {
				tree, err := OpenRevisionSharing(repo, rev, lim, blobs)
				if err != nil {
					t.Error(err)
					return
				}
				trees[i] = tree
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		return trees[0], trees[1]
	}
	node := func(tree *Tree, rel string) *memNode {
		t.Helper()
		n, err := tree.FS.(*confinedFS).b.(*memBackend).node(filepath.Join(tree.Root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	same := func(a, b *memNode) bool { return len(a.data) > 0 && len(b.data) > 0 && &a.data[0] == &b.data[0] }

	b, h := open(NewBlobs())
	if !same(node(b, "app/a.yaml"), node(h, "app/a.yaml")) {
		t.Error("app/a.yaml, the same in both revisions, is held twice")
	}
	if got, want := mustRead(t, b, "app/b.yaml")+mustRead(t, h, "app/b.yaml"), "b: 1\nb: 2\n"; got != want {
		t.Errorf("app/b.yaml at base and head = %q, want %q", got, want)
	}
	for _, tree := range []*Tree{b, h} {
		if n := node(tree, "big.txt"); n.size != int64(len(big)) || n.data != nil {
			t.Errorf("big.txt: size %d, %d bytes held; want its size alone", n.size, len(n.data))
		}
	}

	b, h = open(nil)
	if same(node(b, "app/a.yaml"), node(h, "app/a.yaml")) || mustRead(t, h, "app/a.yaml") != "a: 1\n" {
		t.Error("without Blobs, the revisions share app/a.yaml")
	}
}
