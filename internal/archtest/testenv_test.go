package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestControlPlanesAreStopped: a package whose tests start the shared envtest control
// plane (testenv.Get) has a TestMain that stops it (testenv.Run). Without one, each run
// of the package leaves a kube-apiserver and an etcd running after the tests end
// (olm/rbac did, and CI's machine filled with them).
func TestControlPlanesAreStopped(t *testing.T) {
	root := moduleRoot(t)
	starts, stops := map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		if strings.Contains(string(data), "testenv.Get(") {
			starts[dir] = true
		}
		if strings.Contains(string(data), "testenv.Run(m)") {
			stops[dir] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(starts) == 0 {
		t.Fatal("no package starts a control plane: the walk found no tests")
	}
	for dir := range starts {
		if !stops[dir] {
			t.Errorf("%s: its tests call testenv.Get but no TestMain calls testenv.Run(m): each run leaves a kube-apiserver and an etcd running", dir)
		}
	}
}
