package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestDropBundleObjectProperties: once dropped, a bundle's olm.bundle.object properties are
// gone from its properties and its parsed properties, and what was unpacked from them (the
// CSV, the other objects) and every other property stay; a bundle whose objects were never
// unpacked keeps its properties.
func TestDropBundleObjectProperties(t *testing.T) {
	toJSON := func(y string) []byte {
		t.Helper()
		j, err := yaml.YAMLToJSON([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	line := func(o fbcObject) string {
		t.Helper()
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return string(data) + "\n"
	}
	unpacked := fbcObject{Schema: SchemaBundle, Name: "a.v1.0.0", Package: "a", Properties: []Property{
		mustProperty(PropertyPackage, PackageProperty{PackageName: "a", Version: "1.0.0"}),
		mustProperty(PropertyGVK, GVK{Group: "example.com", Version: "v1", Kind: "Widget"}),
		bundleObjectProperty(toJSON(csvYAML("a.v1.0.0", "1.0.0", "", nil, ""))),
		bundleObjectProperty(toJSON(crdYAML("widgets.example.com", "v1"))),
	}}
	// An object that is not a manifest: nothing is unpacked from it.
	broken := fbcObject{Schema: SchemaBundle, Name: "b.v1.0.0", Package: "b", Properties: []Property{
		mustProperty(PropertyPackage, PackageProperty{PackageName: "b", Version: "1.0.0"}),
		bundleObjectProperty([]byte("[]")),
	}}
	c := ReadFBC(strings.NewReader(`{"schema":"olm.package","name":"a"}`+"\n"+`{"schema":"olm.package","name":"b"}`+"\n"+line(unpacked)+line(broken)), "catalog.json")

	c.DropBundleObjectProperties()

	a := c.Package("a").Bundle("a.v1.0.0")
	var types []string
	for _, p := range a.Properties {
		types = append(types, p.Type)
	}
	if want := []string{PropertyPackage, PropertyGVK}; !slices.Equal(types, want) {
		t.Errorf("properties %v, want %v", types, want)
	}
	if a.CSV == nil || a.CSV.Name != "a.v1.0.0" || len(a.Objects) != 1 || a.Objects[0].Name != "widgets.example.com" {
		t.Errorf("unpacked CSV %v and objects %+v, want both kept", a.CSV != nil, a.Objects)
	}
	bp, err := a.Props()
	if err != nil || len(bp.Objects) != 0 || len(bp.Provides) != 1 {
		t.Errorf("parsed properties %+v (%v): want the GVK and no objects", bp, err)
	}
	if pp, ok := bp.Package(); !ok || pp.PackageName != "a" {
		t.Errorf("package property %+v, want a", pp)
	}

	b := c.Package("b").Bundle("b.v1.0.0")
	if len(b.Properties) != 2 || b.Properties[1].Type != PropertyBundleObject {
		t.Errorf("properties of a bundle nothing was unpacked from: %+v, want both kept", b.Properties)
	}
}
