// Package shareddata finds the real public OLM data that tests and benchmarks read from
// ../shared beside the repository (a community catalog, bundles, real manifests). That
// data is never copied into the project.
//
// When ../shared is absent a test is skipped with a message saying so, unless CI is set:
// under CI a missing folder fails the test, so that a green CI run always means the real
// data was read.
package shareddata

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// EnvVar overrides where the shared folder is.
const EnvVar = "OLMSYNC_SHARED"

// Root returns the shared folder: $OLMSYNC_SHARED, else ../shared beside the repository,
// else a shared folder beside one of the repository's parent folders (a clone kept one
// level deeper, as worktrees and CI checkouts often are). When none exists it returns
// ../shared, the place the messages name.
func Root() string {
	if dir := os.Getenv(EnvVar); dir != "" {
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	// file is <repo>/internal/shareddata/shareddata.go.
	repo := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	beside := filepath.Join(filepath.Dir(repo), "shared")
	for dir := repo; ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			return beside
		}
		if st, err := os.Stat(filepath.Join(parent, "shared", "data")); err == nil && st.IsDir() {
			return filepath.Join(parent, "shared")
		}
		dir = parent
	}
}

// Path returns Root()/rel, skipping the test (or failing it under CI) when it is missing.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(Root(), rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("shared test data %s is missing and CI is set: %v", p, err)
		}
		tb.Skipf("shared test data %s is missing (set %s or put the shared folder beside the repository); skipping", p, EnvVar)
	}
	return p
}

// File is one file of the shared data: its path and content.
type File struct {
	Path string
	Data []byte
}

// Files reads the files below Root()/rel whose paths match (every file when match is nil),
// in lexical order, at most limit of them (0: no limit). Fuzz tests seed their corpora
// with them, read at fuzz time, never copied into the repository. When the folder is
// missing a fuzz test still runs on its own seeds: Files returns nothing, with a log line;
// under CI it fails the test, as Path does.
func Files(tb testing.TB, rel string, match func(path string) bool, limit int) []File {
	tb.Helper()
	root := filepath.Join(Root(), rel)
	if _, err := os.Stat(root); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("shared test data %s is missing and CI is set: %v", root, err)
		}
		tb.Logf("shared test data %s is missing; the fuzz corpus has only the test's own seeds", root)
		return nil
	}
	var out []File
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (match != nil && !match(p)) {
			return err
		}
		if limit > 0 && len(out) == limit {
			return filepath.SkipAll
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: p, Data: data})
		return nil
	})
	if err != nil {
		tb.Fatalf("read shared test data %s: %v", root, err)
	}
	return out
}

// HasExt is a Files match for file names ending in one of exts (".yaml", ".yml").
func HasExt(exts ...string) func(string) bool {
	return func(p string) bool {
		for _, e := range exts {
			if filepath.Ext(p) == e {
				return true
			}
		}
		return false
	}
}

// The GitOps repositories of data/corpora, as git bundles with their history.
const (
	// GitOpsCatalog is redhat-cop/gitops-catalog: about 300 operators, each a base and
	// channel overlays, that other repositories include; no entry point of its own.
	GitOpsCatalog = "redhat-cop-gitops-catalog"
	// GitOpsCatalogHead is the commit the bundle's HEAD is at.
	GitOpsCatalogHead = "7727f2425149abf9e061665c6d1268a70238c138"
)

// Corpus clones the corpus repository name (a bundle of data/corpora) into a new folder
// of dir and returns its path: a real repository with its whole history, its remote
// origin the bundle. Like Path, it skips the test (or fails it under CI) when the shared
// data is missing.
func Corpus(tb testing.TB, dir, name string) string {
	tb.Helper()
	bundle := Path(tb, filepath.Join("data", "corpora", name+".bundle"))
	clone := filepath.Join(dir, name)
	cmd := exec.Command("git", "clone", "--quiet", bundle, clone)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("clone %s: %v\n%s", bundle, err, out)
	}
	return clone
}

// OLMMerges are the last n merges of the corpus clone dir (first-parent history from its
// HEAD) whose change touches a file that holds an OLM object (an operators.coreos.com
// API version) at either side: the pull requests a check on that repository judges. It
// fails the test when there are fewer.
func OLMMerges(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		return string(out), err
	}
	merges, err := git("log", "--merges", "--first-parent", "--format=%H", "HEAD")
	if err != nil {
		tb.Fatalf("git log in %s: %v", dir, err)
	}
	touchesOLM := func(rev, file string) bool {
		out, err := git("show", rev+":"+file)
		return err == nil && strings.Contains(out, "operators.coreos.com/")
	}
	var out []string
	for _, m := range strings.Fields(merges) {
		changed, err := git("diff", "--name-only", "-z", m+"^1", m)
		if err != nil {
			tb.Fatalf("git diff %s: %v", m, err)
		}
		for _, f := range strings.Split(strings.TrimSuffix(changed, "\x00"), "\x00") {
			if touchesOLM(m, f) || touchesOLM(m+"^1", f) {
				out = append(out, m)
				break
			}
		}
		if len(out) == n {
			return out
		}
	}
	tb.Fatalf("%s has %d merges that touch an OLM object, want %d", dir, len(out), n)
	return nil
}
