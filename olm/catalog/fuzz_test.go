package catalog

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
	"github.com/olmsync/olmsync/internal/shareddata"
)

// maxSeed keeps the fuzzers' inputs small enough for many executions a second.
const maxSeed = 32 << 10

// bundlesRoot is the shared data's folder of real bundles and package manifests.
const bundlesRoot = "data/catalogs/community-operators-bundles"

// sharedFile reads one shared file for a seed, "" when it is missing or too large.
func sharedFile(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > maxSeed {
		return ""
	}
	return string(data)
}

// Every parser of outside input is fuzzed: none may panic, whatever it is given, and what
// it reads must survive validation, ordering, graphing and rendering.

// exercise runs everything downstream of a reader over what it read.
func exercise(t *testing.T, c *Catalog) {
	_ = c.Validate()
	for _, p := range c.Packages {
		for _, ch := range p.Channels {
			_, _ = ch.Order()
		}
		if g, err := BuildGraph(c, p.Name, ""); err == nil {
			for _, f := range []string{GraphText, GraphJSON, GraphDOT, GraphMermaid} {
				if err := WriteGraph(&bytes.Buffer{}, g, f); err != nil {
					t.Fatalf("WriteGraph %s: %v", f, err)
				}
			}
		}
	}
	var out bytes.Buffer
	if err := WriteFBC(&out, c, RenderOptions{BundleObjects: true}); err != nil {
		t.Fatalf("WriteFBC: %v", err)
	}
	back := ReadFBC(&out, "rendered.json")
	if len(back.Packages) != len(c.Packages) {
		t.Fatalf("rendered %d packages, read back %d", len(c.Packages), len(back.Packages))
	}
}

func FuzzReadFBCJSON(f *testing.F) {
	f.Add([]byte(etcdJSON))
	f.Add([]byte(otherJSON))
	f.Add([]byte(`{"schema":"olm.channel","package":"a","name":"s","entries":[{"name":"a.v1","replaces":"a.v1","skips":["a.v1",""]}]}`))
	f.Add([]byte(`{"schema":"olm.bundle","name":"b","package":"a","properties":[{"type":"olm.bundle.object","value":{"data":"e30="}},{"type":"olm.constraint","value":{"all":{"constraints":[{"not":{"constraints":[]}}]}}}]}`))
	f.Add([]byte(`{"schema":"olm.deprecations","package":"a","entries":[{"reference":{"schema":"olm.bundle"}}]}{"schema":`))
	// The shared sample catalog, a package at a time.
	for _, file := range shareddata.Files(f, bundlesRoot, func(p string) bool { return strings.HasSuffix(p, "sample-catalog.json") }, 1) {
		c := ReadFBC(bytes.NewReader(file.Data), "sample.json")
		for _, p := range c.Packages {
			var out bytes.Buffer
			if err := WriteFBC(&out, &Catalog{Packages: []*Package{p}}, RenderOptions{}); err == nil && out.Len() <= maxSeed {
				f.Add(out.Bytes())
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		exercise(t, ReadFBC(bytes.NewReader(data), "catalog.json"))
	})
}

func FuzzReadFBCYAML(f *testing.F) {
	f.Add([]byte(etcdYAML))
	f.Add([]byte("---\n--- \n...\nschema: olm.package\nname: a\n--- {schema: olm.channel, package: a, name: s, entries: [{name: a.v1, skipRange: '<1.0.0 || >2.x'}]}\n"))
	f.Add([]byte("schema: olm.bundle\nname: x\nname: y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		exercise(t, ReadFBC(bytes.NewReader(data), "catalog.yaml"))
	})
}

func FuzzPackageManifest(f *testing.F) {
	f.Add("packageName: example\nchannels:\n- name: alpha\n  currentCSV: example.v0.1.2\ndefaultChannel: alpha\n",
		csvYAML("example.v0.1.2", "0.1.2", "example.v0.1.1", []string{"example.v0.1.0"}, ">=0.1.0 <0.1.2", "widgets.example.com"),
		crdYAML("widgets.example.com", "v1"))
	f.Add("packageName: a\nchannels: [{name: x, currentCSV: a.v1}, {name: x}]\n", "kind: ClusterServiceVersion\n", "---\n")
	f.Add("packageName: a\n", yamltest.Laughs(9), yamltest.SelfAnchor)
	// The shared etcd package manifest, with each of its versions' CSV and first CRD.
	for _, file := range shareddata.Files(f, bundlesRoot+"/package-manifests", func(p string) bool { return strings.HasSuffix(p, ".package.yaml") }, 0) {
		dir := filepath.Dir(file.Path)
		versions, _ := os.ReadDir(dir)
		for _, v := range versions {
			csvs, _ := filepath.Glob(filepath.Join(dir, v.Name(), "*.clusterserviceversion.yaml"))
			crds, _ := filepath.Glob(filepath.Join(dir, v.Name(), "*.crd.yaml"))
			if len(csvs) > 0 && len(crds) > 0 {
				if csv, crd := sharedFile(csvs[0]), sharedFile(crds[0]); csv != "" && crd != "" {
					f.Add(string(file.Data), csv, crd)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, pkg, csv, crd string) {
		if pm, err := ParsePackageManifest([]byte(pkg)); err == nil {
			_ = pm.Validate()
		}
		fsys := fstest.MapFS{
			"p/p.package.yaml":   {Data: []byte(pkg)},
			"p/1.0.0/csv.yaml":   {Data: []byte(csv)},
			"p/1.0.0/crd.yaml":   {Data: []byte(crd)},
			"p/1.0.1/csv.yaml":   {Data: []byte(strings.ReplaceAll(csv, "0.1.2", "0.1.1"))},
			"p/1.0.1/other.json": {Data: []byte(crd)},
		}
		c, err := LoadPackageManifests(fsys, "p")
		if err != nil {
			t.Fatal(err)
		}
		exercise(t, c)
	})
}

func FuzzBundleDirectory(f *testing.F) {
	f.Add(etcdAnnotations,
		"dependencies:\n- type: olm.package\n  value: {packageName: a, version: '>0.1.0'}\n- type: olm.gvk\n  value: {group: g, kind: K, version: v1}\n",
		"properties:\n- type: olm.constraint\n  value: {failureMessage: m, cel: {rule: 'true'}}\n",
		csvYAML("etcdoperator.v0.9.2", "0.9.2", "etcdoperator.v0.9.0", nil, "<0.9.2", "etcdclusters.etcd.database.coreos.com"))
	f.Add("annotations: {operators.operatorframework.io.bundle.package.v1: 1, operators.operatorframework.io.bundle.manifests.v1: ../../x}\n",
		"dependencies: [{type: olm.label, value: null}]\n", "properties: 3\n", "{}")
	// The shared bundles: each one's metadata files and CSV (the small ones).
	for _, file := range shareddata.Files(f, bundlesRoot+"/operators", func(p string) bool { return strings.HasSuffix(p, "metadata/annotations.yaml") }, 0) {
		bundle := filepath.Dir(filepath.Dir(file.Path))
		csvs, _ := filepath.Glob(filepath.Join(bundle, "manifests", "*.clusterserviceversion.yaml"))
		if len(csvs) == 0 {
			continue
		}
		if csv := sharedFile(csvs[0]); csv != "" {
			f.Add(string(file.Data), sharedFile(filepath.Join(bundle, "metadata", "dependencies.yaml")),
				sharedFile(filepath.Join(bundle, "metadata", "properties.yaml")), csv)
		}
	}
	f.Fuzz(func(t *testing.T, annotations, dependencies, properties, csv string) {
		_, _ = ParseBundleAnnotations([]byte(annotations))
		_, _ = ParseDependencies([]byte(dependencies))
		_, _ = ParsePropertiesFile([]byte(properties))
		fsys := bundleFS("b/1", map[string]string{
			"metadata/annotations.yaml":  annotations,
			"metadata/dependencies.yaml": dependencies,
			"metadata/properties.yaml":   properties,
			"manifests/csv.yaml":         csv,
		})
		c, err := LoadBundles(fsys, "b")
		if err != nil {
			t.Fatal(err)
		}
		exercise(t, c)
	})
}

func FuzzReadConfigMap(f *testing.F) {
	f.Add(`apiVersion: v1
kind: ConfigMap
metadata: {name: catalog, namespace: olm}
data:
  customResourceDefinitions: |
    - apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      metadata: {name: widgets.example.com}
      spec: {group: example.com, names: {kind: Widget}, versions: [{name: v1}]}
  clusterServiceVersions: |
    - metadata: {name: example.v0.1.2}
      spec: {version: 0.1.2, displayName: e, install: {strategy: deployment}, customresourcedefinitions: {owned: [{name: widgets.example.com, version: v1, kind: Widget}]}}
  packages: |
    - packageName: example
      channels: [{name: alpha, currentCSV: example.v0.1.2}]
`)
	f.Add("kind: ConfigMap\ndata: {packages: '- {packageName: a, channels: [{name: x, currentCSV: a}]}', clusterServiceVersions: '[{metadata: {name: a}, spec: {replaces: a}}]'}\n")
	f.Add(yamltest.Laughs(9))
	f.Add("kind: ConfigMap\ndata:\n  clusterServiceVersions: |\n" + yamltest.Indent(yamltest.Laughs(9), "    "))
	f.Fuzz(func(t *testing.T, manifest string) {
		c, err := ReadConfigMap([]byte(manifest), "cm.yaml")
		if err != nil {
			return
		}
		exercise(t, c)
	})
}

func FuzzParseProperties(f *testing.F) {
	f.Add(`[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}},{"type":"olm.gvk","value":{"group":"g","kind":"K","version":"v1"}}]`)
	f.Add(`[{"type":"olm.csv.metadata","value":{"installModes":[{"type":"OwnNamespace","supported":true}],"crdDescriptions":{"owned":[{"name":"x"}]}}},{"type":"olm.deprecated","value":{}}]`)
	f.Add(`[{"type":"olm.constraint","value":{"any":{"constraints":[{"package":{"packageName":"p","versionRange":">=1.0.0"}},{"gvk":{}}]}}},{"type":"olm.label","value":"x"}]`)
	f.Fuzz(func(t *testing.T, data string) {
		var props []Property
		if json.Unmarshal([]byte(data), &props) != nil {
			return
		}
		bp, _ := ParseProperties(props)
		if bp == nil {
			t.Fatal("ParseProperties returned no view")
		}
		_, _ = bp.Package()
	})
}

// FuzzExtractTree feeds a catalog image's layer stream (a tar archive built from the
// fuzzer's names and contents, or the raw bytes themselves) to the extractor: it must not
// panic, must write nothing outside its destination, and what it writes must read as a
// catalog (or fail to) without a panic.
func FuzzExtractTree(f *testing.F) {
	f.Add("configs/etcd/catalog.json", etcdJSON, "configs/../../escape.json", "{}", []byte{})
	f.Add("/configs/a/b.yaml", etcdYAML, "configs/./x/../y.json", otherJSON, []byte("not a tar"))
	f.Fuzz(func(t *testing.T, name1, body1, name2, body2 string, raw []byte) {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, file := range [][2]string{{name1, body1}, {name2, body2}} {
			if tw.WriteHeader(&tar.Header{Name: file[0], Mode: 0o644, Size: int64(len(file[1])), Typeflag: tar.TypeReg}) != nil {
				return
			}
			if _, err := tw.Write([]byte(file[1])); err != nil {
				return
			}
		}
		if tw.Close() != nil {
			return
		}
		for _, stream := range [][]byte{buf.Bytes(), raw} {
			root := t.TempDir()
			dest := filepath.Join(root, "dest")
			_, _ = extractTree(tar.NewReader(bytes.NewReader(stream)), "configs", dest, 1<<20)
			entries, err := os.ReadDir(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != "dest" {
					t.Fatalf("extractTree wrote %s outside its destination", e.Name())
				}
			}
			if c, err := LoadPath(dest); err == nil {
				exercise(t, c)
			}
		}
	})
}
