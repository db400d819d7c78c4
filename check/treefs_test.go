package check

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

func TestTreeFS(t *testing.T) {
	tree := writeRepo(t, files{
		"policies/acme/channels.rego":      "package acme.channels\n",
		"policies/acme/channels_test.rego": "package acme.channels_test\n",
		"policies/readme.md":               "rules\n",
	})
	fsys := treeFS(tree.FS, tree.Abs("policies"))
	if err := fstest.TestFS(fsys, "acme/channels.rego", "acme/channels_test.rego", "readme.md"); err != nil {
		t.Fatal(err)
	}

	// The tree's confinement holds: a symbolic link out of the repository is not read.
	outside := filepath.Join(t.TempDir(), "secret.rego")
	if err := os.WriteFile(outside, []byte("package secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, tree.Abs("policies/link.rego")); err != nil {
		t.Fatal(err)
	}
	_, err := fs.ReadFile(fsys, "link.rego")
	if err == nil {
		t.Fatal("read a file out of the repository through a symbolic link")
	}
	if _, err := fs.ReadFile(fsys, "../olmsync.yaml"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("read ../: error %v", err)
	}
}
