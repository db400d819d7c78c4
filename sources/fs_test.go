package sources

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

const fixtureLimit = 1024

// confinementFiles is a repository full of the ways a path can try to leave
// it. "../outside" is a real directory beside the repository holding a
// secret, so a working tree that failed to confine would read it.
var confinementFiles = map[string]string{
	"apps/a/kustomization.yaml": "resources:\n- deploy.yaml\n",
	"apps/a/deploy.yaml":        "kind: Deployment\n",
	"apps/a/up":                 "-> ../../base",
	"apps/a/up-out":             "-> ../../..",
	"base/ns.yaml":              "kind: Namespace\n",
	".hidden.yaml":              "hidden\n",
	"big.bin":                   strings.Repeat("x", 2*fixtureLimit),
	"edge.bin":                  strings.Repeat("x", fixtureLimit),
	"link-in":                   "-> base/ns.yaml",
	"link-dir-in":               "-> base",
	"chain1":                    "-> chain2",
	"chain2":                    "-> link-dir-in/ns.yaml",
	"link-out":                  "-> ../outside/secret.txt",
	"link-dir-out":              "-> ../outside",
	"chain-out1":                "-> chain-out2",
	"chain-out2":                "-> link-dir-out/secret.txt",
	"abs-out":                   "-> /etc/passwd",
	"loop1":                     "-> loop2",
	"loop2":                     "-> loop1",
	"file-as-dir":               "plain\n",
}

// confinementTrees returns the fixture as a working tree on disk and as the
// committed revision read from the object store: every rule must hold for
// both.
func confinementTrees(t testing.TB) map[string]*Tree {
	t.Helper()
	repo := newRepo(t, confinementFiles)
	outside := filepath.Join(filepath.Dir(repo), "outside")
	writeFiles(t, outside, map[string]string{"secret.txt": "SECRET\n"})
	lim := Limits{MaxFileSize: fixtureLimit}
	work, err := OpenWorkTree(repo, lim)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := OpenRevision(repo, "HEAD", lim)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Tree{"worktree": work, "revision": rev}
}

func TestReadFileConfinement(t *testing.T) {
	type want struct {
		content string
		escape  *PathEscapeError // Path, Link and Target compared
		tooBig  *FileTooLargeError
		errIs   error
	}
	tests := []struct {
		path string // relative to the root unless it starts with "<abs>"
		want want
	}{
		{path: "apps/a/deploy.yaml", want: want{content: "kind: Deployment\n"}},
		{path: "apps/../base/ns.yaml", want: want{content: "kind: Namespace\n"}},
		{path: "<abs>/base/ns.yaml", want: want{content: "kind: Namespace\n"}},
		{path: "link-in", want: want{content: "kind: Namespace\n"}},
		{path: "link-dir-in/ns.yaml", want: want{content: "kind: Namespace\n"}},
		{path: "apps/a/up/ns.yaml", want: want{content: "kind: Namespace\n"}},
		{path: "chain1", want: want{content: "kind: Namespace\n"}},
		{path: "edge.bin", want: want{content: strings.Repeat("x", fixtureLimit)}},
		{path: "link-out", want: want{escape: &PathEscapeError{Path: "link-out", Link: "link-out", Target: "../outside/secret.txt"}}},
		{path: "link-dir-out/secret.txt", want: want{escape: &PathEscapeError{Path: "link-dir-out/secret.txt", Link: "link-dir-out", Target: "../outside"}}},
		{path: "chain-out1", want: want{escape: &PathEscapeError{Path: "chain-out1", Link: "link-dir-out", Target: "../outside"}}},
		{path: "apps/a/up-out/outside/secret.txt", want: want{escape: &PathEscapeError{Path: "apps/a/up-out/outside/secret.txt", Link: "apps/a/up-out", Target: "../../.."}}},
		{path: "abs-out", want: want{escape: &PathEscapeError{Path: "abs-out", Link: "abs-out", Target: "/etc/passwd"}}},
		{path: "../outside/secret.txt", want: want{escape: &PathEscapeError{Path: "../outside/secret.txt"}}},
		{path: "apps/../../outside/secret.txt", want: want{escape: &PathEscapeError{Path: "apps/../../outside/secret.txt"}}},
		{path: "/etc/passwd", want: want{escape: &PathEscapeError{Path: "/etc/passwd"}}},
		{path: "big.bin", want: want{tooBig: &FileTooLargeError{Path: "big.bin", Size: 2 * fixtureLimit, Limit: fixtureLimit}}},
		{path: "loop1", want: want{errIs: syscall.ELOOP}},
		{path: "missing.yaml", want: want{errIs: fs.ErrNotExist}},
		{path: ".git/config", want: want{errIs: fs.ErrNotExist}},
		{path: "file-as-dir/x", want: want{errIs: syscall.ENOTDIR}},
		{path: "base", want: want{errIs: syscall.EISDIR}},
	}
	for kind, tree := range confinementTrees(t) {
		for _, tc := range tests {
			t.Run(kind+"/"+tc.path, func(t *testing.T) {
				p := strings.Replace(tc.path, "<abs>", tree.Root, 1)
				got, err := tree.FS.ReadFile(p)
				switch w := tc.want; {
				case w.escape != nil:
					var escape *PathEscapeError
					if !errors.As(err, &escape) {
						t.Fatalf("ReadFile(%q) = %q, %v; want a *PathEscapeError", p, got, err)
					}
					if diff := cmp.Diff(w.escape, escape); diff != "" {
						t.Errorf("escape error (-want +got):\n%s", diff)
					}
					if !strings.Contains(err.Error(), w.escape.Path) {
						t.Errorf("error %q does not name the path", err)
					}
				case w.tooBig != nil:
					var tooBig *FileTooLargeError
					if !errors.As(err, &tooBig) {
						t.Fatalf("ReadFile(%q) = %v; want a *FileTooLargeError", p, err)
					}
					if diff := cmp.Diff(w.tooBig, tooBig); diff != "" {
						t.Errorf("too-large error (-want +got):\n%s", diff)
					}
				case w.errIs != nil:
					if !errors.Is(err, w.errIs) {
						t.Fatalf("ReadFile(%q) = %q, %v; want %v", p, got, err, w.errIs)
					}
				default:
					if err != nil {
						t.Fatalf("ReadFile(%q): %v", p, err)
					}
					if string(got) != w.content {
						t.Errorf("ReadFile(%q) = %q, want %q", p, got, w.content)
					}
				}
				if err != nil && strings.Contains(err.Error(), "SECRET") {
					t.Errorf("error leaks the outside file: %v", err)
				}
			})
		}
	}
}

func TestOpenConfinement(t *testing.T) {
	for kind, tree := range confinementTrees(t) {
		t.Run(kind, func(t *testing.T) {
			f, err := tree.FS.Open(tree.Abs("link-dir-in/ns.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(f)
			if err != nil || string(data) != "kind: Namespace\n" {
				t.Errorf("read = %q, %v", data, err)
			}
			if info, err := f.Stat(); err != nil || info.Size() != int64(len("kind: Namespace\n")) {
				t.Errorf("stat = %v, %v", info, err)
			}
			if _, err := f.Write([]byte("x")); !errors.Is(err, ErrReadOnly) {
				t.Errorf("write = %v, want ErrReadOnly", err)
			}
			if err := f.Close(); err != nil {
				t.Error(err)
			}

			var escape *PathEscapeError
			if _, err := tree.FS.Open("link-dir-out/secret.txt"); !errors.As(err, &escape) {
				t.Errorf("Open through an escaping dir link = %v, want *PathEscapeError", err)
			}
			var tooBig *FileTooLargeError
			if _, err := tree.FS.Open("big.bin"); !errors.As(err, &tooBig) {
				t.Errorf("Open(big.bin) = %v, want *FileTooLargeError", err)
			}
			dir, err := tree.FS.Open("base")
			if err != nil {
				t.Fatal(err)
			}
			if info, _ := dir.Stat(); !info.IsDir() {
				t.Error("Open(dir).Stat() is not a directory")
			}
			if _, err := dir.Read(make([]byte, 1)); !errors.Is(err, syscall.EISDIR) {
				t.Errorf("reading a directory = %v, want EISDIR", err)
			}
		})
	}
}

func TestExistsIsDirReadDir(t *testing.T) {
	tests := []struct {
		path   string
		exists bool
		isDir  bool
	}{
		{"apps/a", true, true},
		{"apps/a/deploy.yaml", true, false},
		{"link-dir-in", true, true},
		{"link-in", true, false},
		// A link out exists in the repository; reading it says why it fails.
		{"link-out", true, false},
		{"link-dir-out", true, false},
		{"link-dir-out/secret.txt", true, false},
		{"../outside/secret.txt", false, false},
		{"/etc", false, false},
		{"missing", false, false},
		{".git", false, false},
		{"big.bin", true, false},
	}
	for kind, tree := range confinementTrees(t) {
		for _, tc := range tests {
			if got := tree.FS.Exists(tc.path); got != tc.exists {
				t.Errorf("%s: Exists(%q) = %v, want %v", kind, tc.path, got, tc.exists)
			}
			if got := tree.FS.IsDir(tc.path); got != tc.isDir {
				t.Errorf("%s: IsDir(%q) = %v, want %v", kind, tc.path, got, tc.isDir)
			}
		}
		names, err := tree.FS.ReadDir(tree.Root)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{".hidden.yaml", "abs-out", "apps", "base", "big.bin", "chain-out1", "chain-out2", "chain1", "chain2",
			"edge.bin", "file-as-dir", "link-dir-in", "link-dir-out", "link-in", "link-out", "loop1", "loop2"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("%s: ReadDir(root) (-want +got):\n%s", kind, diff)
		}
		names, err = tree.FS.ReadDir("link-dir-in")
		if err != nil || !cmp.Equal(names, []string{"ns.yaml"}) {
			t.Errorf("%s: ReadDir(link-dir-in) = %v, %v", kind, names, err)
		}
		var escape *PathEscapeError
		if _, err := tree.FS.ReadDir("link-dir-out"); !errors.As(err, &escape) {
			t.Errorf("%s: ReadDir(link-dir-out) = %v, want *PathEscapeError", kind, err)
		}
	}
}

func TestCleanedAbs(t *testing.T) {
	for kind, tree := range confinementTrees(t) {
		t.Run(kind, func(t *testing.T) {
			dir, file, err := tree.FS.CleanedAbs("apps/a/up")
			if err != nil || string(dir) != tree.Abs("base") || file != "" {
				t.Errorf("CleanedAbs(apps/a/up) = %q, %q, %v; want the real base directory", dir, file, err)
			}
			dir, file, err = tree.FS.CleanedAbs(tree.Abs("link-in"))
			if err != nil || string(dir) != tree.Abs("base") || file != "ns.yaml" {
				t.Errorf("CleanedAbs(link-in) = %q, %q, %v", dir, file, err)
			}
			var escape *PathEscapeError
			if _, _, err := tree.FS.CleanedAbs("link-dir-out"); !errors.As(err, &escape) {
				t.Errorf("CleanedAbs(link-dir-out) = %v, want *PathEscapeError", err)
			}
			if _, _, err := tree.FS.CleanedAbs("nope"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("CleanedAbs(nope) = %v, want not-exist", err)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
	}{
		{"apps/*/*.yaml", []string{"apps/a/deploy.yaml", "apps/a/kustomization.yaml"}},
		{"*.yaml", nil}, // hidden files only when the pattern asks for them
		{".*.yaml", []string{".hidden.yaml"}},
		{"link-dir-in/*", []string{"link-dir-in/ns.yaml"}},
		{"link-dir-out/*", nil},
		{"chain?", []string{"chain1", "chain2"}},
		{"base/ns.yaml", []string{"base/ns.yaml"}},
		{"base/none.yaml", nil},
		{".git/*", nil},
	}
	for kind, tree := range confinementTrees(t) {
		for _, tc := range tests {
			got, err := tree.FS.Glob(tc.pattern)
			if err != nil {
				t.Errorf("%s: Glob(%q): %v", kind, tc.pattern, err)
				continue
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, tree.Abs(w))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: Glob(%q) (-want +got):\n%s", kind, tc.pattern, diff)
			}
		}
		var escape *PathEscapeError
		if _, err := tree.FS.Glob("../outside/*"); !errors.As(err, &escape) {
			t.Errorf("%s: Glob outside the root = %v, want *PathEscapeError", kind, err)
		}
		if _, err := tree.FS.Glob("[x"); err == nil {
			t.Errorf("%s: Glob of a bad pattern did not fail", kind)
		}
	}
}

func TestWalk(t *testing.T) {
	for kind, tree := range confinementTrees(t) {
		t.Run(kind, func(t *testing.T) {
			var visited []string
			escapes := map[string]string{}
			err := tree.FS.Walk(tree.Root, func(p string, info fs.FileInfo, err error) error {
				rel, relErr := tree.Rel(p)
				if relErr != nil {
					t.Fatalf("walk gave a path outside the root: %q", p)
				}
				var escape *PathEscapeError
				if errors.As(err, &escape) {
					escapes[rel] = escape.Link
					return nil
				}
				if err != nil {
					return err
				}
				if rel == "apps" {
					return filepath.SkipDir
				}
				kind := "f"
				switch {
				case info.IsDir():
					kind = "d"
				case info.Mode()&fs.ModeSymlink != 0:
					kind = "l"
				}
				visited = append(visited, kind+" "+rel)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// Lexical order; "apps" skipped; symlinks reported, not followed.
			want := []string{"d .", "f .hidden.yaml", "d base", "f base/ns.yaml", "f big.bin", "l chain1", "l chain2",
				"f edge.bin", "f file-as-dir", "l link-dir-in", "l link-in", "l loop1", "l loop2"}
			if diff := cmp.Diff(want, visited); diff != "" {
				t.Errorf("visited (-want +got):\n%s", diff)
			}
			wantEscapes := map[string]string{
				"abs-out": "abs-out", "chain-out1": "link-dir-out", "chain-out2": "link-dir-out",
				"link-dir-out": "link-dir-out", "link-out": "link-out",
			}
			if diff := cmp.Diff(wantEscapes, escapes); diff != "" {
				t.Errorf("escaping symlinks reported (-want +got):\n%s", diff)
			}

			// A walk function that returns the error stops the walk with it.
			err = tree.FS.Walk("link-dir-in/..", func(_ string, _ fs.FileInfo, err error) error { return err })
			var escape *PathEscapeError
			if !errors.As(err, &escape) {
				t.Errorf("walk returning errors = %v, want the first *PathEscapeError", err)
			}
		})
	}
}

func TestWalkStartErrors(t *testing.T) {
	for kind, tree := range confinementTrees(t) {
		var got error
		_ = tree.FS.Walk("link-dir-out", func(_ string, _ fs.FileInfo, err error) error {
			got = err
			return nil
		})
		var escape *PathEscapeError
		if !errors.As(got, &escape) {
			t.Errorf("%s: walking from an escaping link gave %v, want *PathEscapeError", kind, got)
		}
	}
}

func TestReadOnly(t *testing.T) {
	trees := confinementTrees(t)
	for kind, tree := range trees {
		fsys := tree.FS
		_, createErr := fsys.Create("new.yaml")
		for name, err := range map[string]error{
			"Create":    createErr,
			"Mkdir":     fsys.Mkdir("d"),
			"MkdirAll":  fsys.MkdirAll("d/e"),
			"RemoveAll": fsys.RemoveAll("apps"),
			"WriteFile": fsys.WriteFile("apps/a/deploy.yaml", []byte("x")),
		} {
			if !errors.Is(err, ErrReadOnly) {
				t.Errorf("%s: %s = %v, want ErrReadOnly", kind, name, err)
			}
		}
		if got := mustRead(t, tree, "apps/a/deploy.yaml"); got != "kind: Deployment\n" {
			t.Errorf("%s: a refused write changed the file: %q", kind, got)
		}
	}
	if _, err := os.Stat(filepath.Join(trees["worktree"].Root, "d")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Mkdir reached the disk: %v", err)
	}
}

// A file that grows past the bound between being measured and being read
// is still refused.
func TestFileGrowsPastLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "grow.yaml")
	if err := os.WriteFile(p, []byte("small"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := OpenWorkTree(dir, Limits{MaxFileSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	f, err := tree.FS.Open("grow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := os.WriteFile(p, []byte(strings.Repeat("y", 500)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(f)
	var tooBig *FileTooLargeError
	if !errors.As(err, &tooBig) || tooBig.Path != "grow.yaml" || tooBig.Limit != 100 {
		t.Fatalf("reading a grown file = %v, want *FileTooLargeError for grow.yaml", err)
	}
}

// ReadFile's content is exactly as long as its buffer: a render keeps every file it read,
// and room to grow, kept with each, cost more than the files on a repository of small
// manifests (issue 18).
func TestReadFileKeepsNoSlack(t *testing.T) {
	files := map[string]string{"one.yaml": "x", "small.yaml": strings.Repeat("a: b\n", 40), "large.yaml": strings.Repeat("k: v\n", 2000)}
	repo := newRepo(t, files)
	work, err := OpenWorkTree(repo, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := OpenRevision(repo, "HEAD", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for kind, tree := range map[string]*Tree{"worktree": work, "revision": rev} {
		for name, want := range files {
			data, err := tree.FS.ReadFile(name)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if string(data) != want || cap(data) != len(data) {
				t.Errorf("%s: ReadFile(%s) = %d bytes with capacity %d, want the %d bytes of the file and no more room", kind, name, len(data), cap(data), len(want))
			}
		}
	}
}

// readBounded reads what the reader holds, whatever the size it was measured at said,
// into a buffer of its length, and refuses more than the bound.
func TestReadBounded(t *testing.T) {
	const limit = 10
	f := &confinedFS{root: "/repo", maxFileSize: limit}
	failing := errors.New("disk on fire")
	for _, tc := range []struct {
		name     string
		content  string
		sizeHint int64
		readErr  error // after the content
		want     string
		wantErr  error
	}{
		{name: "as measured", content: "abcde", sizeHint: 5, want: "abcde"},
		{name: "empty", content: "", sizeHint: 0, want: ""},
		{name: "shrank", content: "abc", sizeHint: 5, want: "abc"},
		{name: "grew", content: "abcdefg", sizeHint: 5, want: "abcdefg"},
		{name: "grew from nothing", content: "abc", sizeHint: 0, want: "abc"},
		{name: "grew to the bound", content: "abcdefghij", sizeHint: 5, want: "abcdefghij"},
		{name: "grew past the bound", content: "abcdefghijk", sizeHint: 5, wantErr: &FileTooLargeError{Path: "a.yaml", Size: -1, Limit: limit}},
		{name: "error within", content: "ab", sizeHint: 5, readErr: failing, wantErr: failing},
		{name: "error after", content: "abcde", sizeHint: 5, readErr: failing, wantErr: failing},
		{name: "error after growing", content: "abcdef", sizeHint: 5, readErr: failing, wantErr: failing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tc.content)
			if tc.readErr != nil {
				r = io.MultiReader(r, iotest.ErrReader(tc.readErr))
			}
			got, err := f.readBounded("a.yaml", r, tc.sizeHint)
			if tc.wantErr != nil {
				var tooBig *FileTooLargeError
				if errors.As(tc.wantErr, &tooBig) {
					if diff := cmp.Diff(tc.wantErr, err); diff != "" {
						t.Fatalf("error (-want +got):\n%s", diff)
					}
				} else if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || cap(got) != len(got) {
				t.Errorf("read %q with capacity %d, want %q and no more room", got, cap(got), tc.want)
			}
		})
	}
}

func TestDefaultLimit(t *testing.T) {
	if got := (Limits{}).maxFileSize(); got != 16<<20 {
		t.Errorf("default bound = %d", got)
	}
	if got := (Limits{MaxFileSize: 5}).maxFileSize(); got != 5 {
		t.Errorf("bound = %d", got)
	}
}

// FuzzTreePaths: no path, however built, reads the file beside the
// repository or resolves outside the root, in either kind of tree.
func FuzzTreePaths(f *testing.F) {
	trees := confinementTrees(f)
	for _, seed := range []string{
		"link-out", "link-dir-out/secret.txt", "chain-out1", "apps/a/up-out/outside/secret.txt", "../outside/secret.txt",
		"apps/../../outside/secret.txt", "link-dir-in/../link-dir-out/secret.txt", "/etc/passwd", "apps/a/up/../../../outside",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for kind, tree := range trees {
			if data, err := tree.FS.ReadFile(p); err == nil && strings.Contains(string(data), "SECRET") {
				t.Fatalf("%s: ReadFile(%q) read the file outside the repository", kind, p)
			}
			if dir, _, err := tree.FS.CleanedAbs(p); err == nil {
				if _, relErr := tree.Rel(string(dir)); relErr != nil {
					t.Fatalf("%s: CleanedAbs(%q) = %q, outside the root", kind, p, dir)
				}
			}
			if matches, err := tree.FS.Glob(p); err == nil {
				for _, m := range matches {
					if _, relErr := tree.Rel(m); relErr != nil {
						t.Fatalf("%s: Glob(%q) matched %q, outside the root", kind, p, m)
					}
				}
			}
		}
	})
}
