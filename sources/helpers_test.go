package sources

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitEnv isolates the git CLI from the machine's configuration so the
// repositories the tests build are the same everywhere.
func gitEnv() []string {
	return append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=olmsync test", "GIT_AUTHOR_EMAIL=test@olmsync.invalid",
		"GIT_COMMITTER_NAME=olmsync test", "GIT_COMMITTER_EMAIL=test@olmsync.invalid",
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
	)
}

// runGit runs the git CLI in dir and returns its trimmed output.
func runGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a git repository in a fresh directory with the files given
// committed on main, and returns its directory.
func newRepo(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	runGit(tb, dir, "init", "-q")
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
	runGit(tb, dir, "add", "-A")
	runGit(tb, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return runGit(tb, dir, "rev-parse", "HEAD")
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
