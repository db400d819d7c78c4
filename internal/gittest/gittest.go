// Package gittest builds real git repositories on disk for tests, with the git CLI
// isolated from the machine's configuration so that every run makes the same commits.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env isolates the git CLI from the machine's configuration and fixes authors and dates.
func Env() []string {
	return append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=olmsync test", "GIT_AUTHOR_EMAIL=test@olmsync.invalid",
		"GIT_COMMITTER_NAME=olmsync test", "GIT_COMMITTER_EMAIL=test@olmsync.invalid",
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
	)
}

// Git runs the git CLI in dir and returns its trimmed output; a failure fails the test.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Init makes an empty repository (branch main) in a new folder and returns the folder.
func Init(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	Git(tb, dir, "init", "-q")
	return dir
}

// Write writes files (slash-separated paths relative to dir → content) without
// committing them: an empty content removes the file, a content "-> target" makes a
// symbolic link to target, and a name ending in "/" makes a folder.
func Write(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		if content == "" {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
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

// Commit writes files, commits everything in dir and returns the commit's hash.
func Commit(tb testing.TB, dir string, files map[string]string, msg string) string {
	tb.Helper()
	Write(tb, dir, files)
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return Git(tb, dir, "rev-parse", "HEAD")
}
