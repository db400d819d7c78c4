package catalog_test

import (
	"slices"
	"testing"

	"github.com/olmsync/olmsync/olm/catalog"
)

// TestBundleSummary reads what real bundles bring: etcd's cluster-wide variant asks for
// cluster-wide rules only, its namespaced one for namespaced rules only; each owns three
// CRDs stored at v1beta2 and runs one image, pinned by digest.
func TestBundleSummary(t *testing.T) {
	tests := []struct {
		dir          string
		installModes []string
		clusterWide  bool
	}{
		{"etcd/0.9.4", []string{"OwnNamespace", "SingleNamespace"}, false},
		{"etcd/0.9.4-clusterwide", []string{"OwnNamespace", "AllNamespaces"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			u, err := catalog.LoadBundleDir(bundleDir(t, tt.dir))
			if err != nil {
				t.Fatal(err)
			}
			s := u.Bundle.Summary()
			if !slices.Equal(s.InstallModes, tt.installModes) || s.ClusterWide() != tt.clusterWide {
				t.Errorf("install modes %v, cluster-wide %v", s.InstallModes, s.ClusterWide())
			}
			for _, p := range s.Permissions {
				if p.ClusterWide != tt.clusterWide || p.ServiceAccount != "etcd-operator" || len(p.Rules) != 4 {
					t.Errorf("permission %+v", p)
				}
			}
			var crds []string
			for _, c := range s.OwnedCRDs {
				crds = append(crds, c.Name+" "+c.Kind+" "+c.Versions[0])
				if c.Missing {
					t.Errorf("crd %s missing", c.Name)
				}
			}
			want := []string{"etcdbackups.etcd.database.coreos.com EtcdBackup v1beta2*", "etcdclusters.etcd.database.coreos.com EtcdCluster v1beta2*", "etcdrestores.etcd.database.coreos.com EtcdRestore v1beta2*"}
			if !slices.Equal(crds, want) {
				t.Errorf("owned CRDs %q, want %q", crds, want)
			}
			if len(s.Images) != 1 || s.RequiredCRDs == nil || len(s.RequiredCRDs) != 0 {
				t.Errorf("images %v, required %v", s.Images, s.RequiredCRDs)
			}
		})
	}

	t.Run("a bundle known only by image", func(t *testing.T) {
		s := (&catalog.Bundle{Name: "a.v1", Package: "a"}).Summary()
		if s.CSV != "a.v1" || s.InstallModes == nil || s.OwnedCRDs == nil || s.Permissions == nil || s.Images == nil || s.ClusterWide() {
			t.Errorf("summary %+v: lists must be empty, not null", s)
		}
	})
}
