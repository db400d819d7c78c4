package compare_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/olm/catalog"
)

// TestBundleFromCatalog: the bundle image made for a catalog entry agrees with it (name,
// package, version, channels and their edges, install modes, minKubeVersion, owned and
// required CRDs with their plurals), and an entry it cannot agree with is refused.
func TestBundleFromCatalog(t *testing.T) {
	const pkg = "{schema: olm.package, name: etcd, defaultChannel: alpha}\n"
	bundle := func(version, metadata string) string {
		return "---\nschema: olm.bundle\nname: etcd.v" + version + "\npackage: etcd\nimage: quay.io/example/etcd-bundle:v" + version +
			"\nproperties:\n- {type: olm.package, value: {packageName: etcd, version: " + version + "}}\n" + metadata
	}
	const metadata = `- type: olm.csv.metadata
  value:
    minKubeVersion: 1.25.0
    installModes:
    - {type: OwnNamespace, supported: true}
    - {type: SingleNamespace, supported: true}
    - {type: AllNamespaces, supported: false}
    crdDescriptions:
      owned:
      - {name: prometheuses.monitoring.coreos.com, version: v1, kind: Prometheus}
      required:
      - {name: etcdbackups.etcd.database.coreos.com, version: v1beta2, kind: EtcdBackup}
`
	tests := []struct {
		name, fbc string
		want      olmtest.Bundle
		wantErr   string
	}{{
		name: "edges, channels and metadata",
		fbc: pkg + "---\n{schema: olm.channel, package: etcd, name: alpha, entries: [{name: etcd.v0.9.2}, {name: etcd.v0.9.4, replaces: etcd.v0.9.2, skips: [etcd.v0.9.3], skipRange: '<0.9.2'}]}\n" +
			"---\n{schema: olm.channel, package: etcd, name: beta, entries: [{name: etcd.v0.9.4, replaces: etcd.v0.9.2, skips: [etcd.v0.9.3], skipRange: '<0.9.2'}]}\n" +
			bundle("0.9.2", metadata) + bundle("0.9.4", metadata),
		want: olmtest.Bundle{Package: "etcd", Version: "0.9.4", Replaces: "etcd.v0.9.2", Skips: []string{"etcd.v0.9.3"}, SkipRange: "<0.9.2",
			Channels: []string{"alpha", "beta"}, InstallModes: []string{"OwnNamespace", "SingleNamespace"}, MinKubeVersion: "1.25.0",
			Owns:     []olmtest.API{{Group: "monitoring.coreos.com", Version: "v1", Kind: "Prometheus", Plural: "prometheuses"}},
			Requires: []olmtest.API{{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdBackup", Plural: "etcdbackups"}}},
	}, {
		name: "channels that give different edges",
		fbc: pkg + "---\n{schema: olm.channel, package: etcd, name: alpha, entries: [{name: etcd.v0.9.2}, {name: etcd.v0.9.4, replaces: etcd.v0.9.2}]}\n" +
			"---\n{schema: olm.channel, package: etcd, name: beta, entries: [{name: etcd.v0.9.4}]}\n" +
			bundle("0.9.2", metadata) + bundle("0.9.4", metadata),
		wantErr: "bundle etcd.v0.9.4: channels alpha and beta give it different upgrade edges",
	}, {
		name:    "no olm.csv.metadata",
		fbc:     pkg + "---\n{schema: olm.channel, package: etcd, name: alpha, entries: [{name: etcd.v0.9.4}]}\n" + bundle("0.9.4", ""),
		wantErr: "bundle etcd.v0.9.4 has no olm.csv.metadata to make its CSV from",
	}, {
		name: "a CRD name without a group",
		fbc: pkg + "---\n{schema: olm.channel, package: etcd, name: alpha, entries: [{name: etcd.v0.9.4}]}\n" +
			bundle("0.9.4", "- type: olm.csv.metadata\n  value: {crdDescriptions: {owned: [{name: etcdclusters, version: v1, kind: EtcdCluster}]}}\n"),
		wantErr: `bundle etcd.v0.9.4: CRD "etcdclusters" (version "v1", kind "EtcdCluster") is not <plural>.<group> with a version and a kind`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(tc.fbc), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := catalog.LoadPath(dir)
			if err != nil {
				t.Fatal(err)
			}
			p := c.Package("etcd")
			if p == nil {
				t.Fatalf("no package etcd: %v", c.Problems)
			}
			b := p.Bundles[len(p.Bundles)-1]
			got, err := bundleFromCatalog(p, b)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("bundle (-want +got):\n%s", diff)
			}
			// The CSV made from it names the CRDs by the catalog's names.
			for _, name := range []string{"prometheuses.monitoring.coreos.com", "etcdbackups.etcd.database.coreos.com", "minKubeVersion: 1.25.0"} {
				if !strings.Contains(got.CSV(), name) {
					t.Errorf("CSV lacks %q:\n%s", name, got.CSV())
				}
			}
		})
	}
}
