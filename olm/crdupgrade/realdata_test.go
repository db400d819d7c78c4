package crdupgrade_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/crdupgrade"
)

// TestDecodeRealCRDs decodes every CRD of the real bundles (48 apiextensions.k8s.io/v1, 46
// v1beta1) and upgrades each to itself: every one must decode into a v1 CRD with a storage
// version, and a CRD must always be allowed to replace itself.
func TestDecodeRealCRDs(t *testing.T) {
	root := shareddata.Path(t, "data/catalogs/community-operators-bundles/operators")
	seen := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(path)) != "manifests" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(data), "kind: CustomResourceDefinition") {
			return nil
		}
		for _, version := range []string{"apiextensions.k8s.io/v1beta1", "apiextensions.k8s.io/v1\n"} {
			if strings.Contains(string(data), version) {
				seen[strings.TrimSpace(version)]++
			}
		}
		got, err := crdupgrade.Decode(data)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		storage := 0
		for _, v := range got.Spec.Versions {
			if v.Storage {
				storage++
			}
		}
		if storage != 1 {
			t.Errorf("%s: %d storage versions after decoding", path, storage)
		}
		if _, err := crdupgrade.Check(got, got.DeepCopy(), nil); err != nil {
			t.Errorf("%s: a CRD may not replace itself: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen["apiextensions.k8s.io/v1beta1"] < 40 || seen["apiextensions.k8s.io/v1"] < 40 {
		t.Errorf("decoded %v; the README of the data says 48 v1 and 46 v1beta1 CRDs", seen)
	}
}
