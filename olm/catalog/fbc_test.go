package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

const etcdJSON = `{"schema":"olm.package","name":"etcd","defaultChannel":"alpha"}
{"schema":"olm.channel","package":"etcd","name":"alpha","entries":[{"name":"etcd.v0.9.0"},{"name":"etcd.v0.9.2","replaces":"etcd.v0.9.0","skips":["etcd.v0.9.1"],"skipRange":">=0.9.0 <0.9.2"}]}
{"schema":"olm.bundle","name":"etcd.v0.9.0","package":"etcd","image":"quay.io/etcd:0.9.0","properties":[{"type":"olm.package","value":{"packageName":"etcd","version":"0.9.0"}},{"type":"olm.gvk","value":{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}}]}
{
  "schema": "olm.bundle",
  "name": "etcd.v0.9.2",
  "package": "etcd",
  "image": "quay.io/etcd:0.9.2",
  "properties": [
    {"type": "olm.package", "value": {"packageName": "etcd", "version": "0.9.2"}},
    {"type": "olm.gvk.required", "value": {"group": "monitoring.coreos.com", "kind": "Prometheus", "version": "v1"}},
    {"type": "olm.package.required", "value": {"packageName": "prometheus", "versionRange": ">0.27.0"}},
    {"type": "olm.constraint", "value": {"failureMessage": "needs one", "any": {"constraints": [{"gvk": {"group": "g", "kind": "K", "version": "v1"}}, {"package": {"packageName": "p", "versionRange": ">=1.0.0"}}]}}},
    {"type": "olm.csv.metadata", "value": {"displayName": "etcd", "installModes": [{"type": "AllNamespaces", "supported": true}]}},
    {"type": "olm.maxOpenShiftVersion", "value": "4.8"}
  ]
}
`

const etcdYAML = `# etcd as YAML documents
---
schema: olm.package
name: etcd
defaultChannel: alpha
---
# a comment-only document is no object
---
schema: olm.channel
package: etcd
name: alpha
entries:
- name: etcd.v0.9.0
--- {"schema": "olm.bundle", "name": "etcd.v0.9.0", "package": "etcd", "image": "quay.io/etcd:0.9.0", "properties": [{"type": "olm.package", "value": {"packageName": "etcd", "version": "0.9.0"}}]}
`

func TestReadFBC(t *testing.T) {
	c := ReadFBC(strings.NewReader(etcdJSON), "etcd.json")
	if len(c.Problems) != 0 {
		t.Fatalf("problems: %v", c.Problems)
	}
	p := c.Package("etcd")
	if p == nil || p.DefaultChannel != "alpha" || p.Origin.Line != 1 {
		t.Fatalf("package etcd = %+v", p)
	}
	ch := p.Channel("alpha")
	wantEntries := []ChannelEntry{
		{Name: "etcd.v0.9.0", Origin: Origin{File: "etcd.json", Line: 2}},
		{Name: "etcd.v0.9.2", Replaces: "etcd.v0.9.0", Skips: []string{"etcd.v0.9.1"}, SkipRange: ">=0.9.0 <0.9.2", Origin: Origin{File: "etcd.json", Line: 2}},
	}
	if diff := cmp.Diff(wantEntries, ch.Entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	b := p.Bundle("etcd.v0.9.2")
	if b.Origin.Line != 4 || b.Version.String() != "0.9.2" || b.Image != "quay.io/etcd:0.9.2" {
		t.Errorf("bundle etcd.v0.9.2: line %d, version %s, image %s; want line 4 (a pretty-printed object), 0.9.2", b.Origin.Line, b.Version, b.Image)
	}
	props, err := b.Props()
	if err != nil {
		t.Fatal(err)
	}
	want := &BundleProperties{
		Packages:         []PackageProperty{{PackageName: "etcd", Version: "0.9.2"}},
		Requires:         []GVK{{Group: "monitoring.coreos.com", Kind: "Prometheus", Version: "v1"}},
		RequiresPackages: []PackageRequirement{{PackageName: "prometheus", VersionRange: ">0.27.0"}},
		Constraints: []Constraint{{FailureMessage: "needs one", Any: &CompoundConstraint{Constraints: []Constraint{
			{GVK: &GVK{Group: "g", Kind: "K", Version: "v1"}},
			{Package: &PackageRequirement{PackageName: "p", VersionRange: ">=1.0.0"}},
		}}}},
		Metadata: &CSVMetadata{DisplayName: "etcd", InstallModes: p.Bundle("etcd.v0.9.2").props.Metadata.InstallModes},
	}
	if diff := cmp.Diff(want, props); diff != "" {
		t.Errorf("Props() (-want +got):\n%s", diff)
	}
	if got := len(p.Bundle("etcd.v0.9.0").props.Provides); got != 1 {
		t.Errorf("etcd.v0.9.0 provides %d APIs, want 1", got)
	}
}

func TestReadFBCYAML(t *testing.T) {
	c := ReadFBC(strings.NewReader(etcdYAML), "etcd.yaml")
	if len(c.Problems) != 0 {
		t.Fatalf("problems: %v", c.Problems)
	}
	p := c.Package("etcd")
	lines := []int{p.Origin.Line, p.Channel("alpha").Origin.Line, p.Bundle("etcd.v0.9.0").Origin.Line}
	if diff := cmp.Diff([]int{3, 9, 14}, lines); diff != "" {
		t.Errorf("lines of package, channel, bundle (-want +got):\n%s", diff)
	}
	if probs := c.Validate(); len(probs) != 0 {
		t.Errorf("Validate() = %v", probs)
	}
}

func TestLoadFBCTree(t *testing.T) {
	lines := strings.Split(etcdJSON, "\n")
	fsys := fstest.MapFS{
		"catalog/etcd/package.json":        {Data: []byte(lines[0] + "\n" + lines[1] + "\n")},
		"catalog/etcd/bundles/0.9.0.json":  {Data: []byte(lines[2] + "\n")},
		"catalog/etcd/bundles/0.9.2.json":  {Data: []byte(strings.Join(lines[3:], "\n"))},
		"catalog/etcd/README.md":           {Data: []byte("not a catalog")},
		"catalog/.hidden/broken.json":      {Data: []byte("{not json")},
		"catalog/etcd/.indexignore":        {Data: []byte("# opm's ignore file\nscratch-*.yaml\n")},
		"catalog/etcd/scratch-notes.yaml":  {Data: []byte("{not yaml: [")},
		"catalog/other/other.yaml":         {Data: []byte("schema: olm.package\nname: other\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: other\nname: stable\nentries: [{name: other.v1.0.0}]\n---\nschema: olm.bundle\nname: other.v1.0.0\npackage: other\nimage: quay.io/other:1\nproperties: [{type: olm.package, value: {packageName: other, version: 1.0.0}}]\n---\nschema: example.com.thing\npackage: other\nname: kept\n")},
		"catalog/other/deprecations.yaml":  {Data: []byte("schema: olm.deprecations\npackage: other\nentries:\n- reference: {schema: olm.bundle, name: other.v1.0.0}\n  message: use 2.0\n")},
		"catalog/zz-undeclared/chan.json":  {Data: []byte(`{"schema":"olm.channel","package":"ghost","name":"stable","entries":[]}` + "\n")},
		"catalog/zz-broken/broken.json":    {Data: []byte(`{"schema":"olm.package","name":"broken"}` + "\n" + `{"schema":"olm.channel","package":"broken","name":"x","entries":"oops"}` + "\n{\"schema\": \n")},
		"catalog/zz-broken/no-schema.yaml": {Data: []byte("name: what\n")},
	}
	c, err := LoadFBC(fsys, "catalog")
	if err != nil {
		t.Fatal(err)
	}
	var gotPkgs []string
	for _, p := range c.Packages {
		gotPkgs = append(gotPkgs, p.Name)
	}
	if diff := cmp.Diff([]string{"broken", "etcd", "ghost", "other"}, gotPkgs); diff != "" {
		t.Errorf("packages (-want +got):\n%s", diff)
	}
	if len(c.Package("etcd").Bundles) != 2 || len(c.Package("other").Deprecations) != 1 {
		t.Errorf("etcd bundles %d (want 2), other deprecations %d (want 1)", len(c.Package("etcd").Bundles), len(c.Package("other").Deprecations))
	}
	if msg, ok := c.Package("other").Deprecated(SchemaBundle, "other.v1.0.0"); !ok || msg != "use 2.0" {
		t.Errorf("Deprecated(olm.bundle, other.v1.0.0) = %q, %v", msg, ok)
	}
	if _, ok := c.Package("other").Deprecated(SchemaPackage, ""); ok {
		t.Error("the package is not deprecated, only a bundle")
	}
	if len(c.Others) != 1 || c.Others[0].Schema != "example.com.thing" || c.Others[0].Origin != (Origin{File: "catalog/other/other.yaml", Line: 16}) {
		t.Errorf("others = %+v, want the example.com.thing object of other.yaml:16", c.Others)
	}
	want := []problemKey{
		errorKey(CodeParse, "", "", "", "unexpected EOF (the rest of the file is not read)"),
		errorKey(CodeParse, "", "", "", `object "what" has no schema`),
		errorKey(CodeParse, "broken", "", "", `olm.channel "x": json: cannot unmarshal string into Go value of type []catalog.ChannelEntry`),
		errorKey(CodeUnknownPackage, "ghost", "", "", `unknown package "ghost": no olm.package object declares it`),
	}
	if diff := cmp.Diff(want, keysOf(sorted(c.Problems))); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	for _, p := range c.Problems {
		if p.Code == CodeParse && p.Package == "" && p.Origin.File == "catalog/zz-broken/broken.json" && p.Origin.Line != 3 {
			t.Errorf("syntax error at line %d, want 3", p.Origin.Line)
		}
	}
	if got := c.Validate().ForPackage("etcd").Errors(); len(got) != 0 {
		t.Errorf("etcd, read from three files, has errors: %v", got)
	}
}

func sorted(ps Problems) Problems {
	out := append(Problems(nil), ps...)
	out.Sort()
	return out
}

func TestBundleObjects(t *testing.T) {
	obj := func(manifest string) Property {
		data, err := yaml.YAMLToJSON([]byte(manifest))
		if err != nil {
			t.Fatal(err)
		}
		return bundleObjectProperty(data)
	}
	b := fbcObject{Schema: SchemaBundle, Name: "etcd.v0.9.2", Package: "etcd", Properties: []Property{
		mustProperty(PropertyPackage, PackageProperty{PackageName: "etcd", Version: "0.9.2"}),
		obj(csvYAML("etcd.v0.9.2", "0.9.2", "etcd.v0.9.0", nil, "", "etcdclusters.etcd.database.coreos.com")),
		obj(crdYAML("etcdclusters.etcd.database.coreos.com", "v1")),
		{Type: PropertyBundleObject, Value: json.RawMessage(`{"data": "bm90IGEgbWFuaWZlc3Q="}`)},
	}}
	data, _ := json.Marshal(b)
	c := ReadFBC(strings.NewReader(`{"schema":"olm.package","name":"etcd"}`+string(data)), "catalog.json")
	got := c.Package("etcd").Bundle("etcd.v0.9.2")
	if got.CSV == nil || got.CSV.Spec.Replaces != "etcd.v0.9.0" {
		t.Fatalf("CSV = %+v, want the decoded CSV", got.CSV)
	}
	if len(got.Objects) != 1 || got.Objects[0].Kind != "CustomResourceDefinition" || got.Objects[0].Name != "etcdclusters.etcd.database.coreos.com" {
		t.Errorf("objects = %+v, want the CRD", got.Objects)
	}
	if len(c.Problems) != 1 || c.Problems[0].Code != CodeBadProperty || c.Problems[0].Bundle != "etcd.v0.9.2" {
		t.Errorf("problems = %v, want one BadProperty for the object that is no manifest", c.Problems)
	}
}

func TestLoadCommunityCatalog(t *testing.T) {
	file := communityCatalogPath(t)
	c, err := LoadPath(file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source.Format != FormatFBC {
		t.Errorf("format = %s, want fbc", c.Source.Format)
	}
	if len(c.Problems) != 0 {
		t.Errorf("reading problems: %v", c.Problems[:min(5, len(c.Problems))])
	}
	// The counts README.md gives for catalog.json.
	var channels, bundles, gvk, gvkRequired, pkgRequired, withReplaces int
	for _, p := range c.Packages {
		channels += len(p.Channels)
		bundles += len(p.Bundles)
		for _, b := range p.Bundles {
			props, err := b.Props()
			if err != nil {
				t.Errorf("%s: %v", b.Name, err)
				continue
			}
			gvk += len(props.Provides)
			gvkRequired += len(props.Requires)
			pkgRequired += len(props.RequiresPackages)
		}
	}
	seen := map[string]bool{}
	for _, p := range c.Packages {
		for _, ch := range p.Channels {
			for _, e := range ch.Entries {
				if key := p.Name + "/" + e.Name; e.Replaces != "" && !seen[key] {
					seen[key] = true
					withReplaces++
				}
			}
		}
	}
	got := []int{len(c.Packages), channels, bundles, gvk, gvkRequired, pkgRequired}
	if diff := cmp.Diff([]int{333, 654, 7022, 37818, 124, 134}, got); diff != "" {
		t.Errorf("packages, channels, bundles, olm.gvk, olm.gvk.required, olm.package.required (-want +got):\n%s", diff)
	}
	// Lines: one object per line, in file order.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fileLines := strings.Split(string(data), "\n")
	etcd := c.Package("etcd")
	for _, b := range etcd.Bundles {
		if !strings.Contains(fileLines[b.Origin.Line-1], `"name":"`+b.Name+`"`) {
			t.Errorf("bundle %s: line %d does not hold it", b.Name, b.Origin.Line)
		}
	}
	if filepath.Base(etcd.Origin.File) != "catalog.json" {
		t.Errorf("origin file = %s", etcd.Origin.File)
	}
}

// TestCatalogFileIsBounded: a catalog file was read whole however large, value by value
// (issue 30: a 50 MB catalog.json). Past MaxCatalogBytes (lowered here) it stops with a
// limit error at the line it reached; what came before was read.
func TestCatalogFileIsBounded(t *testing.T) {
	defer func(old int64) { maxCatalogBytes = old }(maxCatalogBytes)
	maxCatalogBytes = 64 << 10
	value := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}` + "\n"
	var read int
	err := readJSONStream(strings.NewReader(strings.Repeat(value, 4000)), func([]byte, int) error { read++; return nil })
	var se *StreamError
	if !errors.As(err, &se) || !errors.Is(err, safeyaml.ErrLimit) || !strings.Contains(err.Error(), "at most 65536 of a catalog file are read") {
		t.Fatalf("err = %v, want a limit error", err)
	}
	if read == 0 || read*len(value) > 64<<10 || se.Line != read+1 {
		t.Errorf("read %d values, stopped at line %d", read, se.Line)
	}
}

// TestBundleObjectsAsWritten: an olm.bundle.object written as JSON, as opm writes them,
// is the bundle's object byte for byte (safeyaml.JSONObject); one written as YAML, as
// older tools did, is turned into its JSON; and one whose JSON repeats a name goes the
// YAML way, which refuses it, and is kept as written, as before.
func TestBundleObjectsAsWritten(t *testing.T) {
	crdJSON, err := yaml.YAMLToJSON([]byte(crdYAML("a.example.com", "v1")))
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, crdJSON, "", "  "); err != nil {
		t.Fatal(err)
	}
	crdYAMLText := crdYAML("b.example.com", "v1")
	repeated := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","name":"c"}}`)
	b := fbcObject{Schema: SchemaBundle, Name: "a.v1", Package: "a", Properties: []Property{
		mustProperty(PropertyPackage, PackageProperty{PackageName: "a", Version: "1.0.0"}),
		bundleObjectProperty(indented.Bytes()), bundleObjectProperty([]byte(crdYAMLText)), bundleObjectProperty(repeated),
	}}
	data, _ := json.Marshal(b)
	c := ReadFBC(strings.NewReader(`{"schema":"olm.package","name":"a"}`+string(data)), "catalog.json")
	got := c.Package("a").Bundle("a.v1").Objects
	if len(got) != 3 {
		t.Fatalf("objects = %+v, want 3", got)
	}
	if !bytes.Equal(got[0].JSON, indented.Bytes()) {
		t.Errorf("the JSON object is %s, want it as written:\n%s", got[0].JSON, indented.Bytes())
	}
	want, _ := yaml.YAMLToJSON([]byte(crdYAMLText))
	if !bytes.Equal(got[1].JSON, want) || got[1].Name != "b.example.com" {
		t.Errorf("the YAML object is %s (%s), want its JSON %s", got[1].JSON, got[1].Name, want)
	}
	if !bytes.Equal(got[2].JSON, repeated) {
		t.Errorf("the object repeating a name is %s, want it as written", got[2].JSON)
	}
	if bp, err := c.Package("a").Bundle("a.v1").Props(); bp == nil {
		t.Errorf("no parsed properties: %v", err)
	} else if len(bp.Objects) != 0 {
		t.Errorf("parsed properties hold %d objects: want them dropped once unpacked", len(bp.Objects))
	}
}
