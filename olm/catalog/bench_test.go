package catalog

import (
	"bytes"
	"os"
	"path/filepath"
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
	// As opm renders a catalog from its database: every bundle's manifests as objects.
	var stream bytes.Buffer
	if err := WriteFBC(&stream, c, RenderOptions{BundleObjects: true}); err != nil {
		b.Fatal(err)
	}
	bundles := 0
	for _, p := range c.Packages {
		bundles += len(p.Bundles)
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
