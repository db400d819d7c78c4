package sources

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// TestWorktreeDirty holds worktreeDirty to git's own answer (`git status --porcelain`
// lists something under the folder) on real repositories in every state a working tree
// can be in, and says which cases the index answers alone (fast) and which go to go-git's
// Status; go-git's Status must agree wherever it is asked.
func TestWorktreeDirty(t *testing.T) {
	base := map[string]string{
		".gitignore":             "*.tmp\n!keep.tmp\nbuild/\n",
		"app/kustomization.yaml": "resources: [cm.yaml]\n",
		"app/cm.yaml":            "kind: ConfigMap\n",
		"app/run.sh":             "#!/bin/sh\n",
		"app/link":               "-> cm.yaml",
		"app/deep/.gitignore":    "*.local\n",
		"app/deep/a.yaml":        "a: 1\n",
		"docs/readme.md":         "one\n",
	}
	type change func(t *testing.T, repo string)
	write := func(files map[string]string) change {
		return func(t *testing.T, repo string) { gittest.Write(t, repo, files) }
	}
	run := func(args ...string) change {
		return func(t *testing.T, repo string) { gittest.Git(t, repo, args...) }
	}
	tests := []struct {
		name   string
		change []change
		dir    string
		// fast: the index answers without go-git's Status.
		fast bool
		// goGitDiffers: go-git's Status answers otherwise than git here (it does not read
		// .git/info/exclude through the working tree's filesystem, goes into a nested
		// repository's folder as though it were this one's, and ignores core.fileMode).
		goGitDiffers bool
	}{
		{name: "clean", fast: true},
		{name: "clean, in a folder", dir: "app", fast: true},
		{name: "modified file", change: []change{write(map[string]string{"app/cm.yaml": "kind: Secret\n"})}, fast: true},
		{name: "touched, same content", change: []change{touch("app/cm.yaml")}, fast: true},
		{name: "same size, index older than the change", change: []change{sameSizeChange("app/cm.yaml", "kind: ConfigMop\n"), ageIndex}, fast: true},
		{name: "deleted file", change: []change{write(map[string]string{"app/cm.yaml": ""})}, fast: true},
		{name: "file became a folder", change: []change{write(map[string]string{"app/cm.yaml": ""}), write(map[string]string{"app/cm.yaml/x": "y\n"})}, fast: true},
		{name: "executable bit", change: []change{chmod("app/cm.yaml", 0o755)}, fast: true},
		{name: "executable bit, core.fileMode false", change: []change{run("config", "core.fileMode", "false"), chmod("app/cm.yaml", 0o755)}, fast: true, goGitDiffers: true},
		{name: "executable bit, core.fileMode no", change: []change{run("config", "core.fileMode", "no"), chmod("app/cm.yaml", 0o755)}, fast: true, goGitDiffers: true},
		{name: "link retargeted", change: []change{write(map[string]string{"app/link": "-> run.sh"})}, fast: true},
		{name: "untracked file", change: []change{write(map[string]string{"app/new.yaml": "x\n"})}, fast: true},
		{name: "ignored file", change: []change{write(map[string]string{"app/scratch.tmp": "x\n"})}, fast: true},
		{name: "file an ignore rule lets back in", change: []change{write(map[string]string{"app/keep.tmp": "x\n"})}, fast: true},
		{name: "ignored folder", change: []change{write(map[string]string{"app/build/out.yaml": "x\n"})}, fast: true},
		{name: "ignored by a nested .gitignore", change: []change{write(map[string]string{"app/deep/x.local": "x\n"})}, fast: true},
		{name: "nested .gitignore, elsewhere", change: []change{write(map[string]string{"app/x.local": "x\n"})}, fast: true},
		{name: "ignored by info/exclude", change: []change{write(map[string]string{".git/info/exclude": "*.bak\n", "app/cm.bak": "x\n"})}, fast: true, goGitDiffers: true},
		{name: "empty folder", change: []change{write(map[string]string{"app/empty/": ""})}, fast: true},
		{name: "nested repository", change: []change{write(map[string]string{"app/vendor/": ""}), run("-C", "app/vendor", "init", "-q")}, fast: true, goGitDiffers: true},
		{name: "untracked outside the folder", change: []change{write(map[string]string{"docs/new.md": "x\n"})}, dir: "app", fast: true},
		{name: "modified outside the folder", change: []change{write(map[string]string{"docs/readme.md": "two\n"})}, dir: "app", fast: true},
		{name: "untracked inside the folder", change: []change{write(map[string]string{"app/deep/b.yaml": "x\n"})}, dir: "app/deep", fast: true},
		{name: "ignored by a parent's .gitignore", change: []change{write(map[string]string{"app/deep/x.tmp": "x\n"})}, dir: "app/deep", fast: true},
		{name: "staged change", change: []change{write(map[string]string{"app/cm.yaml": "kind: Secret\n"}), run("add", "app/cm.yaml")}},
		{name: "staged, then changed back", change: []change{write(map[string]string{"app/cm.yaml": "kind: Secret\n"}), run("add", "app/cm.yaml"), write(map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})}},
		{name: "staged outside the folder", change: []change{write(map[string]string{"docs/readme.md": "two\n"}), run("add", "docs")}, dir: "app"},
		{name: "index written by go-git", change: []change{goGitAdd("docs/readme.md")}},
	}
	repo := gittest.Init(t)
	gittest.Write(t, repo, base)
	gittest.Git(t, repo, "add", "-A")
	gittest.Git(t, repo, "commit", "-q", "-m", "base")
	head := gittest.Git(t, repo, "rev-parse", "HEAD")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gittest.Git(t, repo, "reset", "-q", "--hard", head)
			gittest.Git(t, repo, "clean", "-q", "-ffdx")
			gittest.Git(t, repo, "config", "core.fileMode", "true")
			if err := os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, c := range tc.change {
				c(t, repo)
			}
			want := gittest.Git(t, repo, "status", "--porcelain", "--untracked-files=all", "--", cmpOrDot(tc.dir)) != ""

			r, wt := openWorktree(t, repo)
			fastDirty, fast, err := dirtyFromIndex(r, repo, tc.dir, plumbing.NewHash(head))
			if err != nil {
				t.Fatal(err)
			}
			if fast != tc.fast {
				t.Errorf("the index answered alone: %v, want %v", fast, tc.fast)
			}
			if fast && fastDirty != want {
				t.Errorf("from the index: dirty %v; git status says %v", fastDirty, want)
			}
			got, err := worktreeDirty(r, wt, tc.dir, plumbing.NewHash(head))
			if err != nil || got != want {
				t.Errorf("worktreeDirty = %v, %v; git status says %v", got, err, want)
			}
			if !fast {
				return
			}
			// What go-git's Status would have said, had the index not answered.
			viaStatus, err := statusDirty(wt, tc.dir)
			if err != nil || (viaStatus != want) != tc.goGitDiffers {
				t.Errorf("go-git's Status = %v, %v; git status says %v (go-git differs from git here: %v)", viaStatus, err, want, tc.goGitDiffers)
			}
		})
	}
}

func cmpOrDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// touch sets a file's modification time to now, leaving its content.
func touch(name string) func(*testing.T, string) {
	return func(t *testing.T, repo string) {
		later := time.Now().Add(2 * time.Second)
		if err := os.Chtimes(filepath.Join(repo, name), later, later); err != nil {
			t.Fatal(err)
		}
	}
}

func chmod(name string, mode os.FileMode) func(*testing.T, string) {
	return func(t *testing.T, repo string) {
		if err := os.Chmod(filepath.Join(repo, name), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// sameSizeChange rewrites a file with content of the same size and gives it back its
// modification time: only the content tells the change.
func sameSizeChange(name, content string) func(*testing.T, string) {
	return func(t *testing.T, repo string) {
		p := filepath.Join(repo, name)
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(content)) != info.Size() {
			t.Fatalf("%q is not %d bytes", content, info.Size())
		}
		if err := os.WriteFile(p, []byte(content), info.Mode()); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
}

// ageIndex dates the index before its files' modification times: every entry is then
// "racily clean" to git, which compares their content.
func ageIndex(t *testing.T, repo string) {
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(repo, ".git", "index"), old, old); err != nil {
		t.Fatal(err)
	}
}

// openWorktree opens the repository at dir with go-git, and its working tree.
func openWorktree(tb testing.TB, dir string) (*git.Repository, *git.Worktree) {
	tb.Helper()
	r, err := git.PlainOpen(dir)
	if err != nil {
		tb.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		tb.Fatal(err)
	}
	return r, wt
}

// goGitAdd stages a file with go-git, which writes the index without a cached tree.
func goGitAdd(name string) func(*testing.T, string) {
	return func(t *testing.T, repo string) {
		_, wt := openWorktree(t, repo)
		if _, err := wt.Add(name); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkWorkTreeDirty is the dirty check of a check on gitops-catalog's working tree
// (1,763 files): from the index, and by go-git's Status.
func BenchmarkWorkTreeDirty(b *testing.B) {
	r, wt := openWorktree(b, shareddata.Corpus(b, b.TempDir(), shareddata.GitOpsCatalog))
	head, err := r.Head()
	if err != nil {
		b.Fatal(err)
	}
	for name, dirty := range map[string]func() (bool, error){
		"index":  func() (bool, error) { return worktreeDirty(r, wt, "", head.Hash()) },
		"status": func() (bool, error) { return statusDirty(wt, "") },
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d, err := dirty(); err != nil || d {
					b.Fatalf("dirty %v, %v: a fresh clone is clean", d, err)
				}
			}
		})
	}
}

// TestWorktreeDirtyLinkedWorktree: in a worktree `git worktree add` made, whose index
// lies in the main repository's .git/worktrees, the index answers too.
func TestWorktreeDirtyLinkedWorktree(t *testing.T) {
	repo := newRepo(t, map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})
	linked := filepath.Join(t.TempDir(), "linked")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "other", linked)
	head := plumbing.NewHash(gittest.Git(t, linked, "rev-parse", "HEAD"))
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{name: "clean"},
		{name: "untracked file", files: map[string]string{"app/new.yaml": "x\n"}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gittest.Write(t, linked, tc.files)
			r, err := openLocalRepository(linked)
			if err != nil {
				t.Fatal(err)
			}
			dirty, fast, err := dirtyFromIndex(r, linked, "", head)
			if err != nil || !fast || dirty != tc.want {
				t.Errorf("dirtyFromIndex = %v (answered: %v), %v; want %v", dirty, fast, err, tc.want)
			}
		})
	}
}
