package sources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/gittest"
)

// newRepo makes a git repository in a fresh directory with the files given
// committed on main, and returns its directory.
func newRepo(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := gittest.Init(tb)
	commitFiles(tb, dir, files, "initial")
	return dir
}

// writeFiles writes files (slash paths relative to dir); a value starting
// with "-> " makes a symlink to the rest, "" with a trailing "/" in the name
// makes a directory.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		_ = os.Remove(p)
		var err error
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// commitFiles writes files into the repository at dir, commits them all and
// returns the commit's hash.
func commitFiles(tb testing.TB, dir string, files map[string]string, msg string) string {
	tb.Helper()
	writeFiles(tb, dir, files)
	gittest.Git(tb, dir, "add", "-A")
	gittest.Git(tb, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return gittest.Git(tb, dir, "rev-parse", "HEAD")
}

// mustRead reads a file from a tree or fails the test.
func mustRead(tb testing.TB, tree *Tree, rel string) string {
	tb.Helper()
	data, err := tree.FS.ReadFile(tree.Abs(rel))
	if err != nil {
		tb.Fatalf("read %s from %s: %v", rel, tree.Source, err)
	}
	return string(data)
}
