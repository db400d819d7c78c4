package catalog

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/shareddata"
)

func TestPackageManifestValidate(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{name: "seed example", yaml: "packageName: etcd\nchannels:\n- name: alpha\n  currentCSV: etcdoperator.v0.9.2\n- name: beta\n  currentCSV: etcdoperator.v0.9.0\n- name: stable\n  currentCSV: etcdoperator.v0.9.2\ndefaultChannel: alpha\n"},
		{name: "one channel is the default", yaml: "packageName: a\nchannels:\n- {name: alpha, currentCSV: a.v1}\n"},
		{name: "empty", yaml: "{}", want: []string{"packageName empty", "channels empty"}},
		{
			name: "every channel error",
			yaml: "packageName: a\nchannels:\n- {name: '', currentCSV: a.v1}\n- {name: beta}\n- {name: beta, currentCSV: a.v2}\n",
			want: []string{"default channel is empty but more than one channel exists", "channel 0 name is empty", `channel "beta" currentCSV is empty`, `duplicate package manifest channel name "beta"`},
		},
		{name: "default not declared", yaml: "packageName: a\nchannels:\n- {name: alpha, currentCSV: a.v1}\ndefaultChannel: stable\n", want: []string{`default channel "stable" not found in the list of declared channels`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pm, err := ParsePackageManifest([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, pm.Validate()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ParsePackageManifest([]byte("packageName: a\nchanels: []\n")); err == nil || !strings.Contains(err.Error(), `unknown field "chanels"`) {
		t.Errorf("a misspelt field: error = %v", err)
	}
}

// packageFS is a package-manifest folder in memory: the package file and, per version
// folder, its files.
func packageFS(pkgYAML string, versions map[string]map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{"pkg/example.package.yaml": {Data: []byte(pkgYAML)}}
	for version, files := range versions {
		maps(fsys, bundleFS("pkg/"+version, files))
	}
	return fsys
}

func TestLoadPackageManifests(t *testing.T) {
	// seeds 004, "Channels in a package": alpha at example.v0.1.2, beta at example.v0.1.3.
	const seedPackage = "packageName: example\nchannels:\n- name: alpha\n  currentCSV: example.v0.1.2\n- name: beta\n  currentCSV: example.v0.1.3\ndefaultChannel: alpha\n"
	crd := crdYAML("widgets.example.com", "v1")
	version := func(name, v, replaces string, skips ...string) map[string]string {
		return map[string]string{"csv.yaml": csvYAML(name, v, replaces, skips, "", "widgets.example.com"), "crd.yaml": crd}
	}
	tests := []struct {
		name     string
		pkg      string
		versions map[string]map[string]string
		channels map[string][]string
		problems []problemKey
	}{
		{
			name: "seed channels",
			pkg:  seedPackage,
			versions: map[string]map[string]string{
				"0.1.1": version("example.v0.1.1", "0.1.1", ""),
				"0.1.2": version("example.v0.1.2", "0.1.2", "example.v0.1.1"),
				"0.1.3": version("example.v0.1.3", "0.1.3", "example.v0.1.2"),
			},
			channels: map[string][]string{"alpha": {"example.v0.1.2", "example.v0.1.1"}, "beta": {"example.v0.1.3", "example.v0.1.2", "example.v0.1.1"}},
		},
		{
			name: "a skipped CSV joins the channel",
			pkg:  "packageName: example\nchannels:\n- {name: alpha, currentCSV: example.v0.1.3}\n",
			versions: map[string]map[string]string{
				"0.1.1": version("example.v0.1.1", "0.1.1", ""),
				"0.1.2": version("example.v0.1.2", "0.1.2", "example.v0.1.1"),
				"0.1.3": version("example.v0.1.3", "0.1.3", "example.v0.1.1", "example.v0.1.2"),
			},
			channels: map[string][]string{"alpha": {"example.v0.1.3", "example.v0.1.1", "example.v0.1.2"}},
		},
		{
			name: "replaced CSV missing, version folder without CSV, owned CRD missing",
			pkg:  seedPackage,
			versions: map[string]map[string]string{
				"0.1.2": {"csv.yaml": csvYAML("example.v0.1.2", "0.1.2", "example.v0.1.1", nil, "", "widgets.example.com")},
				"0.1.3": version("example.v0.1.3", "0.1.3", "example.v0.1.2"),
				"docs":  {"crd.yaml": crd},
			},
			channels: map[string][]string{"alpha": {"example.v0.1.2"}, "beta": {"example.v0.1.3", "example.v0.1.2"}},
			problems: []problemKey{
				errorKey(CodeCSVCount, "example", "", "", `version folder "docs" must hold exactly one ClusterServiceVersion, found 0`),
				errorKey(CodeOwnedCRDMissing, "example", "", "example.v0.1.2", "owned CRD is not in the version folder: widgets.example.com (version v1)"),
				errorKey(CodeReplacesMissing, "example", "", "example.v0.1.2", "Invalid bundle example.v0.1.2, replaces nonexistent bundle example.v0.1.1"),
			},
		},
		{
			name: "cycle and missing head",
			pkg:  "packageName: example\nchannels:\n- {name: alpha, currentCSV: example.v0.1.2}\n- {name: beta, currentCSV: example.v0.2.0}\ndefaultChannel: alpha\n",
			versions: map[string]map[string]string{
				"0.1.1": version("example.v0.1.1", "0.1.1", "example.v0.1.2"),
				"0.1.2": version("example.v0.1.2", "0.1.2", "example.v0.1.1"),
			},
			channels: map[string][]string{"alpha": {"example.v0.1.2", "example.v0.1.1"}, "beta": nil},
			problems: []problemKey{
				errorKey(CodeCycle, "example", "alpha", "example.v0.1.1", "Cycle detected, example.v0.1.1 replaces example.v0.1.2"),
				errorKey(CodeMissingBundle, "example", "beta", "example.v0.2.0", `currentCSV "example.v0.2.0" is not a CSV of the package`),
			},
		},
		{
			name: "two CSVs in a version folder",
			pkg:  "packageName: example\nchannels:\n- {name: alpha, currentCSV: example.v0.1.1}\n",
			versions: map[string]map[string]string{
				"0.1.1": {"a.yaml": csvYAML("example.v0.1.1", "0.1.1", "", nil, ""), "b.yaml": csvYAML("example.v0.1.0", "0.1.0", "", nil, "")},
			},
			channels: map[string][]string{"alpha": {"example.v0.1.1"}},
			problems: []problemKey{errorKey(CodeCSVCount, "example", "", "", `version folder "0.1.1" must hold exactly one ClusterServiceVersion, found 2`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoadFS(t, func() (*Catalog, error) { return LoadFS(packageFS(tt.pkg, tt.versions), "pkg") })
			if c.Source.Format != FormatPackageManifest {
				t.Fatalf("format %s", c.Source.Format)
			}
			got := map[string][]string{}
			for _, ch := range c.Package("example").Channels {
				got[ch.Name] = nil
				if len(ch.Entries) > 0 {
					got[ch.Name] = names(ch.Entries)
				}
			}
			if diff := cmp.Diff(tt.channels, got); diff != "" {
				t.Errorf("channels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.problems, keysOf(sorted(c.Problems))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadRealEtcdPackageManifest(t *testing.T) {
	c, err := LoadPath(shareddata.Path(t, "data/catalogs/community-operators-bundles/package-manifests/etcd"))
	if err != nil {
		t.Fatal(err)
	}
	if probs := c.Validate(); len(probs) != 0 {
		t.Errorf("problems: %v", probs)
	}
	p := c.Package("etcd")
	if p.DefaultChannel != "singlenamespace-alpha" || len(p.Bundles) != 6 {
		t.Fatalf("etcd: default %q, %d bundles", p.DefaultChannel, len(p.Bundles))
	}
	got := map[string][]string{}
	for _, ch := range p.Channels {
		order, err := ch.Order()
		if err != nil {
			t.Fatal(err)
		}
		got[ch.Name] = names(order)
	}
	want := map[string][]string{
		"alpha":                 {"etcdoperator-community.v0.6.1"},
		"singlenamespace-alpha": {"etcdoperator.v0.9.4", "etcdoperator.v0.9.2", "etcdoperator.v0.9.0"},
		"clusterwide-alpha":     {"etcdoperator.v0.9.4-clusterwide", "etcdoperator.v0.9.2-clusterwide", "etcdoperator.v0.9.0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("channel order (-want +got):\n%s", diff)
	}
	b := p.Bundle("etcdoperator.v0.9.4")
	props, _ := b.Props()
	var kinds []string
	for _, g := range props.Provides {
		kinds = append(kinds, g.Kind)
	}
	if diff := cmp.Diff([]string{"EtcdBackup", "EtcdCluster", "EtcdRestore"}, kinds); diff != "" {
		t.Errorf("provided APIs (-want +got):\n%s", diff)
	}
	if b.CSV == nil || len(b.Objects) != 3 || !strings.HasSuffix(b.Origin.File, "0.9.4/etcdoperator.v0.9.4.clusterserviceversion.yaml") {
		t.Errorf("bundle: CSV %v, %d objects, origin %s", b.CSV != nil, len(b.Objects), b.Origin)
	}
}
