package preview

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/olmsync/olmsync/internal/memguard/memtest"
	"github.com/olmsync/olmsync/internal/safeyaml"
	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
)

// TestClusterStateRefusesHostileYAML: a snapshot file whose aliases expand too far is
// refused, naming the file and the document, before anything decodes it.
func TestClusterStateRefusesHostileYAML(t *testing.T) {
	memtest.Ceiling(t, 1<<30)
	dir := t.TempDir()
	file := filepath.Join(dir, "state.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n"+yamltest.Laughs(9)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadClusterState(dir)
	var se *StateError
	if !errors.As(err, &se) || !errors.Is(err, safeyaml.ErrLimit) || se.File != file || se.Line != 6 {
		t.Errorf("LoadClusterState: %v, want a StateError at %s:6 wrapping safeyaml.ErrLimit", err, file)
	}
}
