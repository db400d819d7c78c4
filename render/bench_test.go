package render

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/olmsync/olmsync/render/rendertest"
)

func TestBenchmarkRepositoryShape(t *testing.T) {
	shape := rendertest.Benchmark
	fsys, root := memRepo(t, shape.Files())
	res := renderRepo(t, fsys, root, Options{})
	objects := 0
	for _, a := range res.Apps {
		if a.Err != nil {
			t.Fatal(a.Err)
		}
		objects += len(a.Objects)
	}
	if len(res.Apps) != 300 || objects != 5000 || shape.Apps() != 300 || shape.Objects() != 5000 ||
		len(res.Clusters) != shape.Clusters || res.Method != MethodArgoCD {
		t.Errorf("generated repository: %d apps, %d objects, %d clusters, method %s; want 300, 5000, %d, argocd",
			len(res.Apps), objects, len(res.Clusters), res.Method, shape.Clusters)
	}
}

// retainedMB is how much live heap what fn returns holds, in MB: the live heap after a
// garbage collection with it kept, less the live heap before.
func retainedMB(b *testing.B, fn func() any) float64 {
	b.Helper()
	live := func() uint64 {
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := live()
	kept := fn()
	after := live()
	runtime.KeepAlive(kept)
	return (float64(after) - float64(before)) / (1 << 20)
}

// BenchmarkRender renders the generated repository of 300 apps and 5,000 objects (25
// clusters found through Argo CD Applications): discovery, planning, kustomize builds and
// provenance, from an in-memory filesystem (what a committed revision gives) and from disk
// (a working tree). retained-MB is what one render's Result holds once it is done: the
// rendered objects, most of it.
func BenchmarkRender(b *testing.B) {
	for _, disk := range []bool{false, true} {
		name, mk := "memory", memRepo
		if disk {
			name, mk = "disk", diskRepo
		}
		b.Run(name, func(b *testing.B) {
			fsys, root := mk(b, rendertest.Benchmark.Files())
			b.ReportAllocs()
			for b.Loop() {
				res, err := Render(context.Background(), fsys, root, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Apps) != 300 || len(res.Failed()) != 0 {
					b.Fatalf("%d apps, %d failed", len(res.Apps), len(res.Failed()))
				}
			}
			b.ReportMetric(float64(rendertest.Benchmark.Objects()), "objects/op")
			b.ReportMetric(retainedMB(b, func() any {
				res, err := Render(context.Background(), fsys, root, Options{})
				if err != nil {
					b.Fatal(err)
				}
				return res
			}), "retained-MB")
		})
	}
}
