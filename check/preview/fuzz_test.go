package preview

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// FuzzClusterState: a cluster snapshot (`check --cluster-state`) of any content never
// makes the reader panic; a file it cannot use is a StateError naming the file and a line
// inside it. Seeded with the shared data's real OLM manifests.
func FuzzClusterState(f *testing.F) {
	for _, file := range shareddata.Files(f, "data/manifests", shareddata.HasExt(".yaml", ".yml"), 0) {
		if len(file.Data) <= 32<<10 {
			f.Add(file.Data)
		}
	}
	for _, seed := range []string{
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n- {apiVersion: operators.coreos.com/v1alpha2, kind: OperatorGroup, metadata: {name: og, namespace: a}}\n",
		"serverVersion: {gitVersion: v1.36.3}\n---\nclientVersion: {}\n",
		yamltest.Laughs(9),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, "state.yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadClusterState(dir)
		if err == nil {
			return
		}
		var se *StateError
		if !errors.As(err, &se) || se.File != file || se.Line < 1 || se.Line > yamltest.MaxLines(data) {
			t.Fatalf("error %v names no place in the file", err)
		}
	})
}
