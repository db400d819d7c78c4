package catalog

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteFBC(t *testing.T) {
	in := `{"schema":"example.com.note","package":"b","name":"kept","text":"<as read>"}
{"schema":"olm.bundle","name":"b.v2.0.0","package":"b","image":"img:2","properties":[{"type":"olm.package","value":{"packageName":"b","version":"2.0.0"}}]}
{"schema":"olm.bundle","name":"b.v1.10.0","package":"b","image":"img:1.10","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.10.0"}}],"relatedImages":[{"name":"op","image":"img:op"}]}
{"schema":"olm.channel","package":"b","name":"stable","entries":[{"name":"b.v1.10.0"},{"name":"b.v2.0.0","replaces":"b.v1.10.0","skipRange":"<2.0.0"}]}
{"schema":"olm.channel","package":"b","name":"alpha","entries":[{"name":"b.v1.10.0"}]}
{"schema":"olm.deprecations","package":"b","entries":[{"reference":{"schema":"olm.channel","name":"alpha"},"message":"use stable"}]}
{"schema":"olm.package","name":"b","defaultChannel":"stable","description":"B & co"}
{"schema":"olm.package","name":"a","defaultChannel":"x"}
`
	want := `{"schema":"olm.package","name":"a","defaultChannel":"x"}
{"schema":"olm.package","name":"b","defaultChannel":"stable","description":"B & co"}
{"schema":"olm.channel","package":"b","name":"alpha","entries":[{"name":"b.v1.10.0"}]}
{"schema":"olm.channel","package":"b","name":"stable","entries":[{"name":"b.v1.10.0"},{"name":"b.v2.0.0","replaces":"b.v1.10.0","skipRange":"<2.0.0"}]}
{"schema":"olm.bundle","name":"b.v1.10.0","package":"b","image":"img:1.10","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.10.0"}}],"relatedImages":[{"name":"op","image":"img:op"}]}
{"schema":"olm.bundle","name":"b.v2.0.0","package":"b","image":"img:2","properties":[{"type":"olm.package","value":{"packageName":"b","version":"2.0.0"}}]}
{"schema":"olm.deprecations","package":"b","entries":[{"reference":{"schema":"olm.channel","name":"alpha"},"message":"use stable"}]}
{"schema":"example.com.note","package":"b","name":"kept","text":"<as read>"}
`
	var out bytes.Buffer
	if err := WriteFBC(&out, ReadFBC(strings.NewReader(in), "in.json"), RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("WriteFBC (-want +got):\n%s", diff)
	}
}

func TestWriteFBCBundleObjects(t *testing.T) {
	fsys := bundleFS("etcd/0.9.2", map[string]string{
		"metadata/annotations.yaml": etcdAnnotations,
		"manifests/csv.yaml":        csvYAML("etcdoperator.v0.9.2", "0.9.2", "", nil, "", "etcdclusters.etcd.database.coreos.com"),
		"manifests/crd.yaml":        crdYAML("etcdclusters.etcd.database.coreos.com", "v1"),
	})
	c := mustLoadFS(t, func() (*Catalog, error) { return LoadBundles(fsys, "etcd") })
	tests := []struct {
		name    string
		image   string
		opts    RenderOptions
		objects int
	}{
		{name: "a bundle without image carries its objects", objects: 2},
		{name: "a bundle with an image does not", image: "quay.io/etcd:0.9.2", objects: 0},
		{name: "unless asked to", image: "quay.io/etcd:0.9.2", opts: RenderOptions{BundleObjects: true}, objects: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.Packages[0].Bundles[0].Image = tt.image
			var out bytes.Buffer
			if err := WriteFBC(&out, c, tt.opts); err != nil {
				t.Fatal(err)
			}
			back := ReadFBC(&out, "rendered.json")
			if errs := back.Validate().Errors(); len(errs) != 0 {
				t.Fatalf("rendered catalog has errors: %v", errs)
			}
			b := back.Package("etcd").Bundle("etcdoperator.v0.9.2")
			got := len(b.Objects)
			if b.CSV != nil {
				got++
			}
			if got != tt.objects {
				t.Errorf("read back %d objects, want %d", got, tt.objects)
			}
			if tt.objects > 0 && (b.CSV == nil || b.CSV.Name != "etcdoperator.v0.9.2" || b.Objects[0].Kind != "CustomResourceDefinition") {
				t.Errorf("objects read back: CSV %v, objects %+v", b.CSV, b.Objects)
			}
			if diff := cmp.Diff(summarize(t, c), summarize(t, back)); tt.objects == 0 && diff != "" {
				t.Errorf("round trip (-rendered +read back):\n%s", diff)
			}
		})
	}
}

// alsoAt finds the file named in a duplicate's message; the line stays.
var alsoAt = regexp.MustCompile(`\(also at [^)]*:(\d+)\)`)

func TestRenderCommunityCatalogRoundTrip(t *testing.T) {
	c, err := LoadPath(communityCatalogPath(t))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteFBC(&out, c, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out.String(), "\n"); lines != 333+654+7022 {
		t.Errorf("%d lines, want one per object (%d)", lines, 333+654+7022)
	}
	back := ReadFBC(&out, "rendered.json")
	if diff := cmp.Diff(summarize(t, c), summarize(t, back)); diff != "" {
		t.Errorf("round trip (-read +rendered):\n%s", diff)
	}
	withoutFiles := func(ps Problems) []problemKey {
		keys := keysOf(ps)
		for i := range keys {
			keys[i].Message = alsoAt.ReplaceAllString(keys[i].Message, "(also at $1)")
		}
		return keys
	}
	if diff := cmp.Diff(withoutFiles(c.Validate()), withoutFiles(back.Validate())); diff != "" {
		t.Errorf("validation after the round trip (-read +rendered):\n%s", diff)
	}
}
