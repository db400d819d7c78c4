package resolve_test

import (
	"runtime"
	"testing"

	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
)

// The benchmarks behind the figures in the closing note, on the real community
// catalog (333 packages, 7,022 bundles, 9.4 MB of FBC JSON).

const communityCatalog = "data/catalogs/community-operators/catalog.json"

func communityResolver(b *testing.B) (*catalog.Catalog, *resolve.Resolver) {
	b.Helper()
	c := loadShared(b, communityCatalog)
	return c, resolve.New([]resolve.Catalog{{Name: "community-operators", Namespace: "olm", Content: c}}, resolve.Options{GlobalNamespace: "olm"})
}

// BenchmarkLoadCommunityCatalogForResolution reads the catalog from disk and indexes it for
// resolution, as a controller does when a catalog changes. heap-MB is what the catalog and
// its index keep alive afterwards (live heap after a GC); peak-RSS-MB is the test
// process's resident high-water mark so far, so it is only this benchmark's own figure when
// the benchmark runs alone (-bench 'LoadCommunityCatalogForResolution$').
func BenchmarkLoadCommunityCatalogForResolution(b *testing.B) {
	file := shareddata.Path(b, communityCatalog)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var keep *resolve.Resolver
	b.ReportAllocs()
	for b.Loop() {
		c, err := catalog.LoadPath(file)
		if err != nil {
			b.Fatal(err)
		}
		keep = resolve.New([]resolve.Catalog{{Name: "community-operators", Namespace: "olm", Content: c}}, resolve.Options{})
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
	if rss, ok := olmtest.PeakRSS(); ok {
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
	}
}

// BenchmarkIndexCommunityCatalog is the indexing alone (resolve.New on a loaded catalog).
func BenchmarkIndexCommunityCatalog(b *testing.B) {
	c := loadShared(b, communityCatalog)
	b.ReportAllocs()
	for b.Loop() {
		resolve.New([]resolve.Catalog{{Name: "community-operators", Namespace: "olm", Content: c}}, resolve.Options{})
	}
}

// BenchmarkResolveEveryDefaultChannelHead resolves, from an empty namespace, a Subscription
// to the default channel of each of the 333 packages (one namespace each); one op is all 333.
func BenchmarkResolveEveryDefaultChannelHead(b *testing.B) {
	c, r := communityResolver(b)
	namespaces := make([]resolve.Namespace, 0, len(c.Packages))
	for _, p := range c.Packages {
		namespaces = append(namespaces, ns(subs(sub("s", p.Name, p.DefaultChannel, "community-operators", "olm"))))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resolved := 0
		for _, n := range namespaces {
			if r.Resolve(n).Subscriptions[0].Resolution.Status == resolve.StatusResolved {
				resolved++
			}
		}
		if resolved != 133 { // TestResolveEveryCommunityPackage checks each one
			b.Fatalf("%d packages resolved, want 133", resolved)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(namespaces)), "ns/package")
}

// BenchmarkResolveMercuryWithDependencies resolves one Subscription with two package
// dependencies over the real bundle directories and makes its InstallPlan steps (CSVs, CRDs,
// RBAC, generated Subscriptions).
func BenchmarkResolveMercuryWithDependencies(b *testing.B) {
	c := loadShared(b, "data/catalogs/community-operators-bundles/operators")
	r := resolve.New([]resolve.Catalog{{Name: "community", Namespace: "olm", Content: c}}, resolve.Options{GlobalNamespace: "olm"})
	n := ns(subs(sub("mercury", "mercury-operator", "stable", "community", "olm")))
	b.ReportAllocs()
	for b.Loop() {
		res := r.Resolve(n)
		plan, err := resolve.NewPlan(res)
		if err != nil {
			b.Fatal(err)
		}
		if len(plan.CSVNames) != 3 {
			b.Fatalf("resolved %+v", res.Subscriptions[0].Resolution)
		}
	}
}
