package catalog_test

import (
	"context"
	"testing"

	"github.com/olmsync/olmsync/internal/ocitest"
	"github.com/olmsync/olmsync/olm/catalog"
)

// BenchmarkUnpackBundleImage pulls and unpacks real bundle images from a registry on
// loopback (HTTPS): cold, into an empty cache each time (the manifest, every layer,
// extraction, validation), and cached (the manifest only, then the folder kept under the
// digest). etcd 0.9.4 is a small bundle (a CSV and three CRDs); strimzi 0.28.0 a large one.
func BenchmarkUnpackBundleImage(b *testing.B) {
	reg := ocitest.Serve(b)
	for _, bundle := range []string{"etcd/0.9.4", "strimzi-kafka-operator/0.28.0"} {
		ref, _ := reg.Push(b, "bench/"+bundle, ocitest.BundleImage(b, bundleDir(b, bundle), nil))
		b.Run(bundle+"/cold", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				cache, err := catalog.OpenImageCache(b.TempDir(), 0, 0)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				u, err := catalog.LoadBundleImage(context.Background(), ref, catalog.ImageOptions{Cache: cache, Transport: reg.Transport()})
				if err != nil || u.Source.Cached {
					b.Fatalf("%v (cached %v)", err, u != nil && u.Source.Cached)
				}
			}
		})
		b.Run(bundle+"/cached", func(b *testing.B) {
			cache, err := catalog.OpenImageCache(b.TempDir(), 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			opts := catalog.ImageOptions{Cache: cache, Transport: reg.Transport()}
			if _, err := catalog.LoadBundleImage(context.Background(), ref, opts); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				u, err := catalog.LoadBundleImage(context.Background(), ref, opts)
				if err != nil || !u.Source.Cached {
					b.Fatalf("%v (cached %v)", err, u != nil && u.Source.Cached)
				}
			}
		})
	}
}
