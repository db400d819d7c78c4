package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// files is a small repository: repository-relative path → content. Leading newlines are
// trimmed and tabs are not allowed in YAML, so test files are written with spaces.
type files = map[string]string

// memRepo writes files into an in-memory filesystem under /gitops.
func memRepo(t testing.TB, fs files) (filesys.FileSystem, string) {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	for p, content := range fs {
		if err := fsys.WriteFile(filepath.Join("/gitops", p), []byte(strings.TrimLeft(content, "\n"))); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.MkdirAll("/gitops"); err != nil {
		t.Fatal(err)
	}
	return fsys, "/gitops"
}

// diskRepo writes files into a temporary folder.
func diskRepo(t testing.TB, fs files) (filesys.FileSystem, string) {
	t.Helper()
	root := t.TempDir()
	for p, content := range fs {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(strings.TrimLeft(content, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filesys.MakeFsOnDisk(), root
}

// unstructuredString reads a nested string field.
func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	return unstructured.NestedString(obj, fields...)
}

// discoverIn opens the repository at root of fsys and finds its apps, as a check does
// before it plans them.
func discoverIn(t *testing.T, fsys filesys.FileSystem, root string) (*repo, *Discovery) {
	t.Helper()
	r, err := newRepo(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	d, err := discover(context.Background(), r, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r, d
}
