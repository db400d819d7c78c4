package sources

import (
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

// writeFiles writes files (slash paths relative to dir): see gittest.Write for links,
// folders and removals.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	gittest.Write(tb, dir, files)
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
