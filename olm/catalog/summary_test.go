package catalog_test

import (
	"slices"
	"strings"
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
		if s.CSV != "a.v1" || s.InstallModes == nil || s.OwnedCRDs == nil || s.Permissions == nil || s.Images == nil || s.ClusterWide() ||
			s.Webhooks == nil || s.APIServices == nil {
			t.Errorf("summary %+v: lists must be empty, not null", s)
		}
	})
}

// TestBundleSummaryWebhooks: the webhooks real bundles bring, in words, cluster-wide scope
// called out: cert-manager's (an AllNamespaces-only operator) validating and mutating
// webhooks, dbaas-operator's conversion webhooks among its validating ones; etcd has none.
func TestBundleSummaryWebhooks(t *testing.T) {
	lines := func(dir string) []string {
		u, err := catalog.LoadBundleDir(bundleDir(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range u.Bundle.Summary().Webhooks {
			out = append(out, w.Line())
		}
		return out
	}
	want := []string{
		"CLUSTER-WIDE validating webhook validate.webhooks.cert-manager.io (deployment cert-manager-webhook, failure policy Fail): CREATE,UPDATE cert-manager.io/v1,acme.cert-manager.io/v1 */*",
		"CLUSTER-WIDE mutating webhook mutate.webhooks.cert-manager.io (deployment cert-manager-webhook, failure policy Fail): CREATE cert-manager.io/v1 certificaterequests",
	}
	if got := lines("cert-manager/1.14.2"); !slices.Equal(got, want) {
		t.Errorf("cert-manager webhooks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	dbaas := lines("dbaas-operator/0.5.0")
	if len(dbaas) != 8 || dbaas[0] != "CLUSTER-WIDE conversion webhook cdbaasconnections.kb.io (deployment dbaas-operator-controller-manager): converts dbaasconnections.dbaas.redhat.com" {
		t.Errorf("dbaas webhooks: %q", dbaas)
	}
	if got := lines("etcd/0.9.4"); len(got) != 0 {
		t.Errorf("etcd webhooks: %q", got)
	}
	var text strings.Builder
	u, err := catalog.LoadBundleDir(bundleDir(t, "cert-manager/1.14.2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.WriteBundleSummary(&text, u.Bundle.Summary(), catalog.ReportText); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "  webhooks:\n    "+want[0]+"\n") || !strings.Contains(text.String(), "  API services: none\n") {
		t.Errorf("text summary:\n%s", text.String())
	}
}
