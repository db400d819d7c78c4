package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/shareddata"
)

func TestParseBundleAnnotations(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    BundleAnnotations
		wantErr string
	}{
		{
			name: "seed example",
			yaml: `annotations:
  operators.operatorframework.io.bundle.mediatype.v1: "registry+v1"
  operators.operatorframework.io.bundle.manifests.v1: "manifests/"
  operators.operatorframework.io.bundle.metadata.v1: "metadata/"
  operators.operatorframework.io.bundle.package.v1: "test-operator"
  operators.operatorframework.io.bundle.channels.v1: "beta,stable"
  operators.operatorframework.io.bundle.channel.default.v1: "stable"
`,
			want: BundleAnnotations{MediaType: "registry+v1", Manifests: "manifests/", Metadata: "metadata/", Package: "test-operator", Channels: []string{"beta", "stable"}, DefaultChannel: "stable"},
		},
		{
			name: "values YAML reads as bool or number, spaces around channels",
			yaml: "annotations:\n  com.redhat.delivery.operator.bundle: true\n  operators.operatorframework.io.bundle.package.v1: etcd\n  operators.operatorframework.io.bundle.channels.v1: ' alpha , 1.0 ,'\n",
			want: BundleAnnotations{Package: "etcd", Channels: []string{"alpha", "1.0"}},
		},
		{name: "no annotations map", yaml: "labels: {}\n", wantErr: "error unmarshaling JSON"},
		{name: "key twice", yaml: "annotations:\n  a: b\n  a: c\n", wantErr: `key "a" already set in map`},
		{name: "empty", yaml: "", wantErr: `no "annotations" map`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBundleAnnotations([]byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDependencies(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    []string // properties as JSON
		wantErr string
	}{
		{
			// seeds 001's dependencies.yaml example.
			name: "seed example",
			yaml: `dependencies:
- type: olm.package
  value:
    packageName: prometheus
    version: ">0.27.0"
- type: olm.gvk
  value:
    group: etcd.database.coreos.com
    kind: EtcdCluster
    version: v1beta2
`,
			want: []string{
				`{"type":"olm.package.required","value":{"packageName":"prometheus","versionRange":"\u003e0.27.0"}}`,
				`{"type":"olm.gvk.required","value":{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}}`,
			},
		},
		{
			name: "label and constraint",
			yaml: "dependencies:\n- type: olm.label\n  value: {label: beta}\n- type: olm.constraint\n  value:\n    failureMessage: needs one\n    any:\n      constraints:\n      - package: {packageName: a, versionRange: '>=1.0.0'}\n      - gvk: {group: g, kind: K, version: v1}\n",
			want: []string{
				`{"type":"olm.label.required","value":{"label":"beta"}}`,
				`{"type":"olm.constraint","value":{"any":{"constraints":[{"package":{"packageName":"a","versionRange":"\u003e=1.0.0"}},{"gvk":{"group":"g","kind":"K","version":"v1"}}]},"failureMessage":"needs one"}}`,
			},
		},
		{
			name:    "a range OLM cannot parse is refused here, the rest kept",
			yaml:    "dependencies:\n- type: olm.package\n  value: {packageName: a, version: '^1.0.0'}\n- type: olm.gvk\n  value: {group: g, kind: K, version: v1}\n",
			want:    []string{`{"type":"olm.gvk.required","value":{"group":"g","kind":"K","version":"v1"}}`},
			wantErr: `dependency 0 (olm.package): version range "^1.0.0": Could not parse Range "^1.0.0": Could not parse comparator "^" in "^1.0.0"`,
		},
		{name: "unknown type", yaml: "dependencies:\n- type: olm.magic\n  value: {}\n", wantErr: `dependency 0 (olm.magic): unknown dependency type "olm.magic"`},
		{name: "constraint with two clauses", yaml: "dependencies:\n- type: olm.constraint\n  value: {gvk: {group: g, kind: K, version: v1}, package: {packageName: a, versionRange: '>0.0.0'}}\n", wantErr: "exactly one of"},
		{name: "no value", yaml: "dependencies:\n- type: olm.gvk\n", wantErr: "value is missing"},
		{name: "not YAML", yaml: "dependencies: [\n", wantErr: "yaml"},
		{name: "unknown field", yaml: "dependencies: []\nextra: 1\n", wantErr: `unknown field "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, err := ParseDependencies([]byte(tt.yaml))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			var got []string
			for _, p := range props {
				data, _ := json.Marshal(p)
				got = append(got, string(data))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePropertiesFile(t *testing.T) {
	props, err := ParsePropertiesFile([]byte("properties:\n- type: olm.maxOpenShiftVersion\n  value: '4.8'\n- type: olm.label\n  value: {label: x}\n"))
	if err != nil || len(props) != 2 || props[0].Type != "olm.maxOpenShiftVersion" || string(props[0].Value) != `"4.8"` {
		t.Errorf("ParsePropertiesFile = %v, %v", props, err)
	}
	// pelorus-operator's properties.yaml holds dependencies instead (ANOMALIES.md).
	if _, err := ParsePropertiesFile([]byte("dependencies: []\n")); err == nil || err.Error() != `no "properties" key (keys: dependencies)` {
		t.Errorf("error = %v", err)
	}
	if _, err := ParsePropertiesFile([]byte("properties:\n- value: 1\n")); err == nil {
		t.Error("a property without type was accepted")
	}
}

// bundleFS is a bundle directory in memory.
func bundleFS(root string, files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[root+"/"+name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

const etcdAnnotations = `annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: etcd
  operators.operatorframework.io.bundle.channels.v1: alpha,stable
  operators.operatorframework.io.bundle.channel.default.v1: stable
`

func TestLoadBundleDirectory(t *testing.T) {
	fsys := bundleFS("etcd/0.9.2", map[string]string{
		"metadata/annotations.yaml":  etcdAnnotations,
		"metadata/dependencies.yaml": "dependencies:\n- type: olm.package\n  value: {packageName: prometheus, version: '>0.27.0'}\n",
		"metadata/properties.yaml":   "properties:\n- type: olm.maxOpenShiftVersion\n  value: '4.12'\n",
		"manifests/csv.yaml":         csvYAML("etcdoperator.v0.9.2", "0.9.2", "etcdoperator.v0.9.0", []string{"etcdoperator.v0.9.1"}, ">=0.9.0 <0.9.2", "etcdclusters.etcd.database.coreos.com"),
		"manifests/crd.yaml":         crdYAML("etcdclusters.etcd.database.coreos.com", "v1", "v1beta2"),
		"manifests/secret.yaml":      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: etcd-config\n",
		"manifests/notes.txt":        "ignored",
	})
	c := mustLoadFS(t, func() (*Catalog, error) { return LoadBundles(fsys, "etcd/0.9.2") })
	if len(c.Problems) != 0 {
		t.Fatalf("problems: %v", c.Problems)
	}
	p := c.Package("etcd")
	if p.DefaultChannel != "stable" || len(p.Channels) != 2 {
		t.Fatalf("package %+v", p)
	}
	wantEntry := ChannelEntry{Name: "etcdoperator.v0.9.2", Replaces: "etcdoperator.v0.9.0", Skips: []string{"etcdoperator.v0.9.1"}, SkipRange: ">=0.9.0 <0.9.2",
		Origin: Origin{File: "etcd/0.9.2/manifests/csv.yaml", Line: 1}}
	for _, ch := range p.Channels {
		if diff := cmp.Diff([]ChannelEntry{wantEntry}, ch.Entries); diff != "" {
			t.Errorf("channel %s (-want +got):\n%s", ch.Name, diff)
		}
	}
	b := p.Bundle("etcdoperator.v0.9.2")
	if b.CSV == nil || len(b.Objects) != 2 || b.Version.String() != "0.9.2" {
		t.Fatalf("bundle: CSV %v, %d objects, version %s", b.CSV != nil, len(b.Objects), b.Version)
	}
	var types []string
	for _, prop := range b.Properties {
		data, _ := json.Marshal(prop.Value)
		types = append(types, prop.Type+" "+string(data))
	}
	want := []string{
		`olm.package {"packageName":"etcd","version":"0.9.2"}`,
		`olm.gvk {"group":"etcd.database.coreos.com","kind":"Etcdcluster","version":"v1"}`,
		`olm.gvk {"group":"etcd.database.coreos.com","kind":"Etcdcluster","version":"v1beta2"}`,
		`olm.package.required {"packageName":"prometheus","versionRange":"\u003e0.27.0"}`,
		`olm.maxOpenShiftVersion "4.12"`,
	}
	if diff := cmp.Diff(want, types[:len(types)-1]); diff != "" {
		t.Errorf("properties (-want +got):\n%s", diff)
	}
	if last := b.Properties[len(b.Properties)-1]; last.Type != PropertyCSVMetadata {
		t.Errorf("last property %s, want olm.csv.metadata", last.Type)
	}
	props, _ := b.Props()
	if props.Metadata.Annotations["olm.skipRange"] != ">=0.9.0 <0.9.2" || len(props.Metadata.InstallModes) != 2 {
		t.Errorf("csv metadata = %+v", props.Metadata)
	}
}

func TestLoadBundleDirectoryProblems(t *testing.T) {
	csv := csvYAML("a.v1.0.0", "1.0.0", "", nil, "", "widgets.example.com")
	ann := strings.ReplaceAll(etcdAnnotations, "etcd", "a")
	tests := []struct {
		name  string
		files map[string]string
		want  []problemKey
	}{
		{
			name:  "no channels",
			files: map[string]string{"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: a\n", "manifests/csv.yaml": csv, "manifests/crd.yaml": crdYAML("widgets.example.com", "v1")},
			want:  []problemKey{errorKey(CodeBundleMetadata, "a", "", "a.v1.0.0", "bundle has no channel: annotation operators.operatorframework.io.bundle.channels.v1 is empty")},
		},
		{
			name:  "owned CRD missing",
			files: map[string]string{"metadata/annotations.yaml": ann, "manifests/csv.yaml": csv},
			want:  []problemKey{errorKey(CodeOwnedCRDMissing, "a", "", "a.v1.0.0", "owned CRD is not in the bundle: widgets.example.com (version v1)")},
		},
		{
			name:  "owned CRD at another version",
			files: map[string]string{"metadata/annotations.yaml": ann, "manifests/csv.yaml": csv, "manifests/crd.yaml": crdYAML("widgets.example.com", "v2")},
			want:  []problemKey{errorKey(CodeOwnedCRDMissing, "a", "", "a.v1.0.0", "owned CRD is not in the bundle: widgets.example.com (version v1)")},
		},
		{
			name:  "two CSVs",
			files: map[string]string{"metadata/annotations.yaml": ann, "manifests/csv.yaml": csvYAML("a.v1.0.0", "1.0.0", "", nil, ""), "manifests/csv2.yaml": csvYAML("a.v2.0.0", "2.0.0", "", nil, "")},
			want:  []problemKey{errorKey(CodeCSVCount, "a", "", "", "bundle must contain exactly one ClusterServiceVersion, found 2")},
		},
		{
			name:  "no CSV",
			files: map[string]string{"metadata/annotations.yaml": ann, "manifests/crd.yaml": crdYAML("widgets.example.com", "v1")},
			want:  []problemKey{errorKey(CodeCSVCount, "a", "", "", "bundle must contain exactly one ClusterServiceVersion, found 0")},
		},
		{
			name:  "unusable dependencies and properties files; a helm bundle",
			files: map[string]string{"metadata/annotations.yaml": strings.ReplaceAll(ann, "registry+v1", "helm+v1"), "metadata/dependencies.yaml": "dependencies: [\n", "metadata/properties.yaml": "dependencies: []\n", "manifests/csv.yaml": csvYAML("a.v1.0.0", "1.0.0", "", nil, "")},
			want: []problemKey{
				errorKey(CodeBundleMetadata, "a", "", "", `bundle media type "helm+v1" is not "registry+v1"`),
				errorKey(CodeBundleMetadata, "a", "", "a.v1.0.0", "metadata/dependencies.yaml: error converting YAML to JSON: yaml: line 1: did not find expected node content"),
				errorKey(CodeBundleMetadata, "a", "", "a.v1.0.0", `metadata/properties.yaml: no "properties" key (keys: dependencies)`),
			},
		},
		{
			name:  "manifests in the bundle folder itself, a CSV field the types do not know",
			files: map[string]string{"metadata/annotations.yaml": ann, "csv.yaml": strings.Replace(csvYAML("a.v1.0.0", "1.0.0", "", nil, ""), "spec:\n", "spec:\n  MinKubeVersion: 1.20.0\n", 1)},
			want:  []problemKey{{SeverityWarning, CodeUnknownField, "a", "", "a.v1.0.0", `ClusterServiceVersion a.v1.0.0: unknown field "spec.MinKubeVersion"`}},
		},
		{
			name: "a manifest that does not parse, one that is no object",
			files: map[string]string{"metadata/annotations.yaml": ann, "manifests/csv.yaml": csvYAML("a.v1.0.0", "1.0.0", "", nil, ""),
				"manifests/broken.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\nmetadata: {name: [\n", "manifests/list.yaml": "- 1\n"},
			want: []problemKey{
				errorKey(CodeParse, "a", "", "", "yaml: line 6: did not find expected node content"),
				errorKey(CodeParse, "a", "", "", "not a Kubernetes object: [1]"),
			},
		},
		{
			name:  "manifests annotation leaving the bundle",
			files: map[string]string{"metadata/annotations.yaml": strings.Replace(ann, "manifests/", "../../elsewhere/", 1), "manifests/csv.yaml": csv},
			want:  []problemKey{errorKey(CodeBundleMetadata, "a", "", "", `annotation operators.operatorframework.io.bundle.manifests.v1 "../../elsewhere/" does not name a folder inside the bundle`)},
		},
		{
			name:  "annotations without package",
			files: map[string]string{"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.channels.v1: alpha\n", "manifests/csv.yaml": csv},
			want:  []problemKey{errorKey(CodeBundleMetadata, "", "", "", "annotation operators.operatorframework.io.bundle.package.v1 is not set")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoadFS(t, func() (*Catalog, error) { return LoadBundles(bundleFS("a/1.0.0", tt.files), "a") })
			if diff := cmp.Diff(tt.want, keysOf(sorted(c.Problems))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBundleFolderChannelsAndDefault(t *testing.T) {
	annotations := func(channels, def string) string {
		s := "annotations:\n  operators.operatorframework.io.bundle.package.v1: a\n  operators.operatorframework.io.bundle.channels.v1: " + channels + "\n"
		if def != "" {
			s += "  operators.operatorframework.io.bundle.channel.default.v1: " + def + "\n"
		}
		return s
	}
	fsys := fstest.MapFS{}
	for dir, files := range map[string]map[string]string{
		"ops/a/1.0.0":        {"metadata/annotations.yaml": annotations("alpha", "alpha"), "manifests/csv.yaml": csvYAML("a.v1.0.0", "1.0.0", "", nil, "")},
		"ops/a/1.1.0":        {"metadata/annotations.yaml": annotations("alpha,stable", "stable"), "manifests/csv.yaml": csvYAML("a.v1.1.0", "1.1.0", "a.v1.0.0", nil, "")},
		"ops/a/1.2.0/bundle": {"metadata/annotations.yaml": annotations("stable", ""), "manifests/csv.yaml": csvYAML("a.v1.2.0", "1.2.0", "a.v1.1.0", nil, "")},
		"ops/b/0.1.0":        {"metadata/annotations.yaml": strings.ReplaceAll(annotations("beta", ""), ": a\n", ": b\n"), "manifests/csv.yaml": csvYAML("b.v0.1.0", "0.1.0", "", nil, "")},
	} {
		maps(fsys, bundleFS(dir, files))
	}
	c := mustLoadFS(t, func() (*Catalog, error) { return LoadFS(fsys, "ops") })
	if c.Source.Format != FormatBundles {
		t.Errorf("format %s", c.Source.Format)
	}
	a, b := c.Package("a"), c.Package("b")
	got := map[string][]string{}
	for _, ch := range a.Channels {
		got[ch.Name] = names(ch.Entries)
	}
	if diff := cmp.Diff(map[string][]string{"alpha": {"a.v1.0.0", "a.v1.1.0"}, "stable": {"a.v1.1.0", "a.v1.2.0"}}, got); diff != "" {
		t.Errorf("channels (-want +got):\n%s", diff)
	}
	// The highest version naming a default channel wins; a single channel is the default.
	if a.DefaultChannel != "stable" || b.DefaultChannel != "beta" {
		t.Errorf("default channels %q, %q; want stable, beta", a.DefaultChannel, b.DefaultChannel)
	}
	if errs := c.Validate().Errors(); len(errs) != 0 {
		t.Errorf("errors: %v", errs)
	}
}

func maps(dst, src fstest.MapFS) {
	for k, v := range src {
		dst[k] = v
	}
}

// TestCommunityBundlesMatchSampleCatalog reads the real bundles and compares, semantically,
// what they become with sample-catalog.json, the same conversion's FBC: packages, default
// channels, channel entries and edges, bundle versions and properties.
func TestCommunityBundlesMatchSampleCatalog(t *testing.T) {
	dir := shareddata.Path(t, "data/catalogs/community-operators-bundles")
	fromBundles, err := LoadPath(filepath.Join(dir, "operators"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := fromBundles.Problems.Errors(); len(errs) != 0 {
		t.Errorf("reading the bundles: %v", errs)
	}
	sample, err := LoadPath(filepath.Join(dir, "sample-catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summarize(t, fromBundles), summarize(t, sample); !cmp.Equal(want, got) {
		t.Errorf("bundles differ from sample-catalog.json (-sample +bundles):\n%s", cmp.Diff(want, got))
	}
	if len(fromBundles.Packages) != 11 {
		t.Errorf("%d packages, want 11", len(fromBundles.Packages))
	}
	// The same defects, found from both.
	if diff := cmp.Diff(keysOf(sample.Validate().Errors()), keysOf(fromBundles.Validate().Errors())); diff != "" {
		t.Errorf("validation differs (-sample +bundles):\n%s", diff)
	}
}

// catalogSummary is what two renderings of one catalog must agree on.
type catalogSummary map[string]packageSummary

type packageSummary struct {
	DefaultChannel string
	Channels       map[string][]string // entry name -> "replaces|skips|skipRange", sorted
	Bundles        map[string][]string // bundle name -> version and canonical properties, sorted
}

func summarize(t *testing.T, c *Catalog) catalogSummary {
	t.Helper()
	out := catalogSummary{}
	for _, p := range c.Packages {
		ps := packageSummary{DefaultChannel: p.DefaultChannel, Channels: map[string][]string{}, Bundles: map[string][]string{}}
		for _, ch := range p.Channels {
			for _, e := range ch.Entries {
				ps.Channels[ch.Name] = append(ps.Channels[ch.Name], e.Name+"|"+e.Replaces+"|"+strings.Join(slices.Sorted(slices.Values(e.Skips)), ",")+"|"+e.SkipRange)
			}
			slices.Sort(ps.Channels[ch.Name])
		}
		for _, b := range p.Bundles {
			key := b.Name
			if _, dup := ps.Bundles[key]; dup {
				key += " (again)"
			}
			facts := []string{"version " + b.Version.String()}
			for _, prop := range b.Properties {
				facts = append(facts, prop.Type+" "+canonicalProperty(t, prop))
			}
			slices.Sort(facts)
			ps.Bundles[key] = facts
		}
		out[p.Name] = ps
	}
	return out
}

// canonicalProperty writes a property value with sorted keys. sample-catalog.json's
// olm.csv.metadata keeps only some fields and annotations, so only those are compared.
func canonicalProperty(t *testing.T, p Property) string {
	var v any
	if err := json.Unmarshal(p.Value, &v); err != nil {
		t.Fatal(err)
	}
	if p.Type == PropertyCSVMetadata {
		m, _ := v.(map[string]any)
		kept := map[string]any{}
		for _, k := range []string{"displayName", "installModes", "minKubeVersion", "provider"} {
			if m[k] != nil {
				kept[k] = m[k]
			}
		}
		anns, _ := m["annotations"].(map[string]any)
		keptAnns := map[string]any{}
		for _, k := range []string{"olm.skipRange", "capabilities", "operatorframework.io/suggested-namespace", "operators.operatorframework.io/suggested-namespace", "olm.properties"} {
			if anns[k] != nil {
				keptAnns[k] = anns[k]
			}
		}
		if len(keptAnns) > 0 {
			kept["annotations"] = keptAnns
		}
		v = kept
	}
	data, _ := json.Marshal(v)
	return string(data)
}

func TestLoadPathErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadPath(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing path loaded")
	}
	if _, err := LoadPath(dir); err == nil || !strings.Contains(err.Error(), "no catalog found") {
		t.Errorf("an empty folder: error = %v", err)
	}
	mixed := filepath.Join(dir, "mixed")
	for file, data := range map[string]string{
		"mixed/a/1.0.0/metadata/annotations.yaml": etcdAnnotations,
		"mixed/b/b.package.yaml":                  "packageName: b\nchannels: []\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, file)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadPath(mixed); err == nil || !strings.Contains(err.Error(), "both bundle directories") {
		t.Errorf("bundles and package manifests together: error = %v", err)
	}
}
