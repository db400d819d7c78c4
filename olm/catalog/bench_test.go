package catalog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/olmsync/olmsync/internal/shareddata"
)

func communityCatalogPath(tb testing.TB) string {
	tb.Helper()
	return shareddata.Path(tb, "data/catalogs/community-operators/catalog.json")
}

func communityCatalog(b *testing.B) *Catalog {
	b.Helper()
	file := communityCatalogPath(b)
	c, err := LoadFBC(os.DirFS(filepath.Dir(file)), filepath.Base(file))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkLoadCommunityCatalog reads the real 333-package, 7,022-bundle FBC (9.4 MB,
// one object per line) from disk.
func BenchmarkLoadCommunityCatalog(b *testing.B) {
	file := communityCatalogPath(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadFBC(os.DirFS(filepath.Dir(file)), filepath.Base(file)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateCommunityCatalog validates the real catalog once it is read.
func BenchmarkValidateCommunityCatalog(b *testing.B) {
	c := communityCatalog(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = c.Validate()
	}
}

// BenchmarkOrderDefaultChannels orders the default channel of every package of the real
// catalog, as a resolver does to find each package's head (the channels that cannot be
// ordered return OLM's error, which costs as much).
func BenchmarkOrderDefaultChannels(b *testing.B) {
	c := communityCatalog(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, p := range c.Packages {
			if ch := p.Channel(p.DefaultChannel); ch != nil {
				_, _ = ch.Order()
			}
		}
	}
}

// BenchmarkLoadCommunityBundles reads the 68 real bundle directories (CSVs and CRDs, YAML).
func BenchmarkLoadCommunityBundles(b *testing.B) {
	dir := shareddata.Path(b, "data/catalogs/community-operators-bundles/operators")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadPath(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadBundleObjects reads an FBC that carries every bundle's manifests in
// olm.bundle.object properties, as catalogs made from an opm database do: the 68 real
// bundles of ../shared/data, each with its CSV and other objects as base64 JSON.
func BenchmarkReadBundleObjects(b *testing.B) {
	dir := shareddata.Path(b, "data/catalogs/community-operators-bundles/operators")
	c, err := LoadPath(dir)
	if err != nil {
		b.Fatal(err)
	}
	var stream bytes.Buffer
	object := func(data []byte) Property {
		v, err := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString(data)})
		if err != nil {
			b.Fatal(err)
		}
		return Property{Type: PropertyBundleObject, Value: v}
	}
	bundles := 0
	for _, p := range c.Packages {
		for _, bd := range p.Bundles {
			if bd.CSV == nil {
				continue
			}
			csv, err := json.Marshal(bd.CSV)
			if err != nil {
				b.Fatal(err)
			}
			props := append(slices.Clone(bd.Properties), object(csv))
			for _, o := range bd.Objects {
				props = append(props, object(o.JSON))
			}
			line, err := json.Marshal(fbcObject{Schema: SchemaBundle, Name: bd.Name, Package: p.Name, Image: bd.Image, Properties: props})
			if err != nil {
				b.Fatal(err)
			}
			stream.Write(line)
			stream.WriteByte('\n')
			bundles++
		}
	}
	b.SetBytes(int64(stream.Len()))
	b.ReportAllocs()
	for b.Loop() {
		got := ReadFBC(bytes.NewReader(stream.Bytes()), "catalog.json")
		if n := len(got.Packages); n == 0 {
			b.Fatal("no packages read")
		}
	}
	b.ReportMetric(float64(bundles), "bundles") // after the loop, whose start resets the metrics
}
