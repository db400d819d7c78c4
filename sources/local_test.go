package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/olmsync/olmsync/internal/gittest"
)

// history makes a repository with three commits on main, a lightweight tag
// on the first, an annotated tag on the second and a side branch, and
// returns it with the commits' hashes, oldest first.
func history(t *testing.T) (string, []string) {
	t.Helper()
	repo := newRepo(t, map[string]string{"app/config.yaml": "version: 1\n", "docs/readme.md": "one\n"})
	c1 := gittest.Git(t, repo, "rev-parse", "HEAD")
	gittest.Git(t, repo, "tag", "v1.0.0")
	c2 := commitFiles(t, repo, map[string]string{"app/config.yaml": "version: 2\n"}, "second")
	gittest.Git(t, repo, "tag", "-a", "-m", "release 2", "v2.0.0")
	c3 := commitFiles(t, repo, map[string]string{"app/config.yaml": "version: 3\n"}, "third")
	gittest.Git(t, repo, "branch", "side", c1)
	return repo, []string{c1, c2, c3}
}

func TestOpenRevision(t *testing.T) {
	repo, c := history(t)
	tests := []struct {
		rev          string
		wantRevision string
		wantVersion  string
	}{
		{"main", "main@sha1:" + c[2], "3"},
		{"HEAD", "main@sha1:" + c[2], "3"},
		{"HEAD~1", "sha1:" + c[1], "2"},
		{"main^^", "sha1:" + c[0], "1"},
		{"v1.0.0", "v1.0.0@sha1:" + c[0], "1"},
		{"v2.0.0", "v2.0.0@sha1:" + c[1], "2"}, // annotated: peeled to its commit
		{"refs/tags/v2.0.0", "v2.0.0@sha1:" + c[1], "2"},
		{"side", "side@sha1:" + c[0], "1"},
		{c[1], "sha1:" + c[1], "2"},
		{c[1][:10], "sha1:" + c[1], "2"},
	}
	for _, tc := range tests {
		t.Run(tc.rev, func(t *testing.T) {
			tree, err := OpenRevision(repo, tc.rev, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if tree.Revision != tc.wantRevision {
				t.Errorf("Revision = %q, want %q", tree.Revision, tc.wantRevision)
			}
			if got := mustRead(t, tree, "app/config.yaml"); got != "version: "+tc.wantVersion+"\n" {
				t.Errorf("app/config.yaml = %q, want version %s", got, tc.wantVersion)
			}
			if tree.Root != "/repo" || tree.Dirty || tree.Commit != strings.Split(tc.wantRevision, ":")[1] {
				t.Errorf("tree = root %q dirty %v commit %q", tree.Root, tree.Dirty, tree.Commit)
			}
		})
	}
}

// OpenRevision reads the object store itself: it works with no git binary
// on PATH, and never sees uncommitted changes.
func TestOpenRevisionWithoutGitBinary(t *testing.T) {
	repo, c := history(t)
	writeFiles(t, repo, map[string]string{"app/config.yaml": "version: uncommitted\n", "new.yaml": "x\n"})
	t.Setenv("PATH", "")
	tree, err := OpenRevision(repo, "HEAD", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, tree, "app/config.yaml"); got != "version: 3\n" {
		t.Errorf("app/config.yaml = %q, want the committed version", got)
	}
	if tree.FS.Exists("new.yaml") {
		t.Error("an untracked file is in the committed revision")
	}
	if tree.Commit != c[2] {
		t.Errorf("Commit = %s, want %s", tree.Commit, c[2])
	}
}

func TestOpenRevisionOfSubdirectory(t *testing.T) {
	repo, c := history(t)
	tree, err := OpenRevision(filepath.Join(repo, "app"), "HEAD~1", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, tree, "config.yaml"); got != "version: 2\n" {
		t.Errorf("config.yaml = %q", got)
	}
	var escape *PathEscapeError
	if _, err := tree.FS.ReadFile("../docs/readme.md"); !errors.As(err, &escape) {
		t.Errorf("reading beside the subdirectory = %v, want *PathEscapeError", err)
	}
	if tree.Revision != "sha1:"+c[1] {
		t.Errorf("Revision = %q", tree.Revision)
	}

	// A subdirectory the revision does not have yet.
	writeFiles(t, repo, map[string]string{"later/x.yaml": "x\n"})
	_, err = OpenRevision(filepath.Join(repo, "later"), "HEAD", Limits{})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "later") {
		t.Errorf("OpenRevision of a directory missing at the revision = %v", err)
	}
}

func TestOpenRevisionOfBareRepository(t *testing.T) {
	repo, c := history(t)
	bare := filepath.Join(t.TempDir(), "bare.git")
	gittest.Git(t, filepath.Dir(bare), "clone", "-q", "--bare", repo, bare)
	tree, err := OpenRevision(bare, "v2.0.0", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Revision != "v2.0.0@sha1:"+c[1] || mustRead(t, tree, "app/config.yaml") != "version: 2\n" {
		t.Errorf("bare repository read %q at %s", mustRead(t, tree, "app/config.yaml"), tree.Revision)
	}
}

func TestOpenRevisionErrors(t *testing.T) {
	repo, _ := history(t)
	for _, rev := range []string{"nope", "v9.9.9", "HEAD~10", strings.Repeat("ab", 20), "main^{nonsense"} {
		_, err := OpenRevision(repo, rev, Limits{})
		var unknown *UnknownRefError
		if !errors.As(err, &unknown) {
			t.Errorf("OpenRevision(%q) = %v, want *UnknownRefError", rev, err)
			continue
		}
		if !strings.Contains(err.Error(), rev) || !strings.Contains(err.Error(), repo) {
			t.Errorf("error %q does not name the revision and the repository", err)
		}
	}

	plain := t.TempDir()
	_, err := OpenRevision(plain, "HEAD", Limits{})
	var notRepo *NotRepositoryError
	if !errors.As(err, &notRepo) || notRepo.Source != plain {
		t.Errorf("OpenRevision outside git = %v, want *NotRepositoryError naming %s", err, plain)
	}
	if _, err := OpenRevision(filepath.Join(plain, "missing"), "HEAD", Limits{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenRevision of a missing directory = %v", err)
	}
}

// A commit written by a hostile tool can hold tree entries git itself never
// writes. They must not move a path out of the tree.
func TestOpenRevisionRefusesHostileEntries(t *testing.T) {
	for _, name := range []string{"..", ".", "a/b"} {
		t.Run(name, func(t *testing.T) {
			repo := newRepo(t, map[string]string{"ok.yaml": "ok\n"})
			hostileCommit(t, repo, name)
			_, err := OpenRevision(repo, "hostile", Limits{})
			if err == nil || !strings.Contains(err.Error(), "invalid file name") {
				t.Fatalf("OpenRevision of a tree with entry %q = %v, want an invalid-name error", name, err)
			}
		})
	}
	t.Run(".git", func(t *testing.T) {
		repo := newRepo(t, map[string]string{"ok.yaml": "ok\n"})
		hostileCommit(t, repo, ".GIT")
		tree, err := OpenRevision(repo, "hostile", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if tree.FS.Exists(".GIT") || tree.FS.Exists(".GIT/config") {
			t.Error("a .git entry of a commit is visible")
		}
	})
}

// hostileCommit writes, with go-git's plumbing, a commit whose root tree has
// a directory entry with the given name, and points branch "hostile" at it.
func hostileCommit(t *testing.T, dir, name string) {
	t.Helper()
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	store := func(o interface {
		Encode(plumbing.EncodedObject) error
	}) plumbing.Hash {
		obj := repo.Storer.NewEncodedObject()
		if err := o.Encode(obj); err != nil {
			t.Fatal(err)
		}
		h, err := repo.Storer.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	blob := repo.Storer.NewEncodedObject()
	blob.SetType(plumbing.BlobObject)
	w, _ := blob.Writer()
	_, _ = w.Write([]byte("config\n"))
	_ = w.Close()
	blobHash, err := repo.Storer.SetEncodedObject(blob)
	if err != nil {
		t.Fatal(err)
	}
	inner := store(&object.Tree{Entries: []object.TreeEntry{{Name: "config", Mode: filemode.Regular, Hash: blobHash}}})
	root := store(&object.Tree{Entries: []object.TreeEntry{{Name: name, Mode: filemode.Dir, Hash: inner}}})
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	parent, err := repo.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	commit := store(&object.Commit{
		Author: parent.Author, Committer: parent.Committer, Message: "hostile",
		TreeHash: root, ParentHashes: []plumbing.Hash{parent.Hash},
	})
	if err := repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/hostile", commit)); err != nil {
		t.Fatal(err)
	}
}

func TestOpenWorkTree(t *testing.T) {
	repo, c := history(t)
	gittest.Git(t, repo, "checkout", "-q", "main")
	writeFiles(t, repo, map[string]string{".gitignore": "*.tmp\n"})
	gittest.Git(t, repo, "add", ".gitignore")
	gittest.Git(t, repo, "commit", "-q", "-m", "ignore")
	head := gittest.Git(t, repo, "rev-parse", "HEAD")

	tests := []struct {
		name      string
		change    map[string]string
		dir       string
		wantDirty bool
	}{
		{name: "clean"},
		{name: "ignored file", change: map[string]string{"scratch.tmp": "x"}},
		{name: "modified file", change: map[string]string{"app/config.yaml": "version: 4\n"}, wantDirty: true},
		{name: "untracked file", change: map[string]string{"app/new.yaml": "x\n"}, wantDirty: true},
		{name: "change outside the subdirectory", change: map[string]string{"docs/readme.md": "two\n"}, dir: "app"},
		{name: "change inside the subdirectory", change: map[string]string{"app/config.yaml": "v\n"}, dir: "app", wantDirty: true},
	}
	// StartWorkTree gives the same once settled; before, the files are read while git
	// status runs (under -race, what a check does).
	for _, tc := range tests {
		for _, start := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/start=%v", tc.name, start), func(t *testing.T) {
				gittest.Git(t, repo, "reset", "-q", "--hard", head)
				gittest.Git(t, repo, "clean", "-q", "-fdx")
				writeFiles(t, repo, tc.change)
				var tree *Tree
				var err error
				if start {
					tree, err = StartWorkTree(filepath.Join(repo, tc.dir), Limits{})
				} else {
					tree, err = OpenWorkTree(filepath.Join(repo, tc.dir), Limits{})
				}
				if err != nil {
					t.Fatal(err)
				}
				checkWorkTree(t, tree, tc.change, tc.dir, head, tc.wantDirty)
			})
		}
	}
	_ = c
}

func checkWorkTree(t *testing.T, tree *Tree, change map[string]string, dir, head string, wantDirty bool) {
	t.Helper()
	for name, content := range change {
		rel := strings.TrimPrefix(name, dir+"/")
		if strings.HasPrefix(rel, "docs/") && dir != "" {
			continue
		}
		if got := mustRead(t, tree, rel); got != content {
			t.Errorf("%s = %q, want the file on disk %q", rel, got, content)
		}
	}
	for range 2 { // Settle again changes nothing
		if err := tree.Settle(); err != nil {
			t.Fatal(err)
		}
	}
	want := "main@sha1:" + head
	if wantDirty {
		want += "+dirty"
	}
	if tree.Revision != want || tree.Dirty != wantDirty || tree.Commit != head {
		t.Errorf("Revision %q, Dirty %v, Commit %s; want %q", tree.Revision, tree.Dirty, tree.Commit, want)
	}
}

func TestOpenWorkTreeOutsideGit(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"kustomization.yaml": "resources: []\n"})
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	tree, err := OpenWorkTree(link, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if tree.Root != real || tree.Revision != "" || tree.Commit != "" || tree.Source != link {
		t.Errorf("tree = %+v", tree)
	}
	if mustRead(t, tree, "kustomization.yaml") != "resources: []\n" {
		t.Error("content")
	}
	if _, err := OpenWorkTree(filepath.Join(dir, "kustomization.yaml"), Limits{}); err == nil {
		t.Error("OpenWorkTree of a file did not fail")
	}
}

func TestTreeRel(t *testing.T) {
	tree := &Tree{Root: "/repo"}
	if rel, err := tree.Rel("/repo/apps/a.yaml"); err != nil || rel != "apps/a.yaml" {
		t.Errorf("Rel = %q, %v", rel, err)
	}
	var escape *PathEscapeError
	if _, err := tree.Rel("/etc/passwd"); !errors.As(err, &escape) {
		t.Errorf("Rel outside = %v", err)
	}
	if got := tree.Abs("apps/a.yaml"); got != "/repo/apps/a.yaml" {
		t.Errorf("Abs = %q", got)
	}
}

// A file over the bound is never inflated into memory: reading the tree
// costs far less than the file's size, whether its object is loose or packed.
func TestOversizeFileIsNotLoaded(t *testing.T) {
	const size = 64 << 20
	repo := newRepo(t, map[string]string{"small.yaml": "ok\n"})
	// Zeros compress to almost nothing, so the repository stays small on disk.
	if err := os.WriteFile(filepath.Join(repo, "huge.bin"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, repo, "add", "huge.bin")
	gittest.Git(t, repo, "commit", "-q", "-m", "huge")
	for _, layout := range []string{"loose", "packed"} {
		if layout == "packed" {
			gittest.Git(t, repo, "gc", "-q")
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tree, err := OpenRevision(repo, "HEAD", Limits{})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if allocated := after.TotalAlloc - before.TotalAlloc; allocated > size/4 {
			t.Errorf("%s: reading the tree allocated %d bytes for a %d-byte file over the bound", layout, allocated, size)
		}
		var tooBig *FileTooLargeError
		if _, err := tree.FS.ReadFile("huge.bin"); !errors.As(err, &tooBig) || tooBig.Size != size || tooBig.Limit != DefaultMaxFileSize {
			t.Errorf("%s: ReadFile(huge.bin) = %v", layout, err)
		}
		if !strings.Contains(fmt.Sprint(tooBig), "huge.bin") {
			t.Errorf("%s: error %v does not name the file", layout, tooBig)
		}
	}
}

// TestRepositoryIdentity checks what a local tree knows of its repository: the remote's
// URL without the credentials a CI checkout puts in it, and the folder's path inside the
// repository, for a working tree and a committed revision alike.
func TestRepositoryIdentity(t *testing.T) {
	repo := newRepo(t, map[string]string{"gitops/apps/a.yaml": "a: 1\n"})
	gittest.Git(t, repo, "remote", "add", "upstream", "git@github.com:org/fork.git")
	gittest.Git(t, repo, "remote", "add", "origin", "https://x-access-token:s3cret@github.com/Org/GitOps.git")
	for _, open := range []struct {
		name string
		fn   func(dir string) (*Tree, error)
	}{
		{"work tree", func(dir string) (*Tree, error) { return OpenWorkTree(dir, Limits{}) }},
		{"revision", func(dir string) (*Tree, error) { return OpenRevision(dir, "HEAD", Limits{}) }},
	} {
		top, err := open.fn(repo)
		if err != nil {
			t.Fatal(err)
		}
		if top.RepoURL != "https://github.com/Org/GitOps.git" || top.RepoPath != "" {
			t.Errorf("%s of the top: RepoURL %q, RepoPath %q; want origin without credentials, no path", open.name, top.RepoURL, top.RepoPath)
		}
		sub, err := open.fn(filepath.Join(repo, "gitops"))
		if err != nil {
			t.Fatal(err)
		}
		if sub.RepoURL != top.RepoURL || sub.RepoPath != "gitops" {
			t.Errorf("%s of gitops/: RepoURL %q, RepoPath %q", open.name, sub.RepoURL, sub.RepoPath)
		}
	}
	// Without origin, the only remote names the repository; with two and no origin, none does.
	gittest.Git(t, repo, "remote", "remove", "origin")
	tree, err := OpenWorkTree(repo, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if tree.RepoURL != "git@github.com:org/fork.git" {
		t.Errorf("only remote: RepoURL %q", tree.RepoURL)
	}
	gittest.Git(t, repo, "remote", "add", "other", "https://example.com/other.git")
	if tree, err = OpenWorkTree(repo, Limits{}); err != nil || tree.RepoURL != "" {
		t.Errorf("two remotes, no origin: RepoURL %q (%v), want none", tree.RepoURL, err)
	}
}

func TestWithoutUserinfo(t *testing.T) {
	tests := map[string]string{
		"https://user:pass@github.com/org/repo.git": "https://github.com/org/repo.git",
		"https://token@gitlab.com/org/repo":         "https://gitlab.com/org/repo",
		"ssh://git@github.com/org/repo":             "ssh://github.com/org/repo",
		"git@github.com:org/repo.git":               "git@github.com:org/repo.git",
		"https://github.com/org/a@b":                "https://github.com/org/a@b",
		"/srv/git/repo":                             "/srv/git/repo",
	}
	for in, want := range tests {
		if got := withoutUserinfo(in); got != want {
			t.Errorf("withoutUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}
