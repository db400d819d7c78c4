package olm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// The shape of BenchmarkSteadyState: packages × versions bundles in one catalog image, and
// subscriptionsPerNamespace Subscriptions (each to another package) in each of namespaces.
const (
	benchPackages             = 50
	benchVersions             = 60 // 3,000 bundles
	benchNamespaces           = 100
	subscriptionsPerNamespace = 5 // 500 Subscriptions
)

// BenchmarkSteadyState measures the whole embedded OLM (every controller, one manager) taking
// 500 Subscriptions across 100 namespaces to steady state — every Subscription AtLatestKnown
// and its CSV Succeeded — against a catalog image of 3,000 bundles served by an in-process
// registry. Each package is a replaces chain of 60 versions owning one CRD; every namespace
// has its own OperatorGroup. It reports the API requests the manager made and the process's
// peak RSS (the manager and the benchmark; the API server and etcd run apart).
func BenchmarkSteadyState(b *testing.B) { benchSteadyState(b, false) }

// BenchmarkSteadyStateImageBundles is BenchmarkSteadyState with a catalog that lists its
// 3,000 bundles by image only, as real catalogs do: every plan unpacks its bundle image
// (50 distinct channel heads, pulled once each, then shared through the unpacker and the
// image cache).
func BenchmarkSteadyStateImageBundles(b *testing.B) { benchSteadyState(b, true) }

func benchSteadyState(b *testing.B, imageOnly bool) {
	env := testenv.Get(b)
	var bundles []olmtest.Bundle
	for p := range benchPackages {
		pkg := fmt.Sprintf("bench%02d", p)
		api := olmtest.API{Group: pkg + ".example.com", Version: "v1", Kind: "Thing"}
		for v := range benchVersions {
			bd := olmtest.Bundle{Package: pkg, Version: fmt.Sprintf("1.%d.0", v), Owns: []olmtest.API{api}}
			if v > 0 {
				bd.Replaces = fmt.Sprintf("%s.v1.%d.0", pkg, v-1)
			}
			bundles = append(bundles, bd)
		}
	}
	reg := olmtest.ServeRegistry(b)
	var image string
	if imageOnly {
		image = reg.PushImageOnlyCatalog(b, "bench/catalog:images", "bench/bundles/", bundles)
	} else {
		image, _ = reg.PushCatalog(b, "bench/catalog:latest", olmtest.FBC(b, bundles))
	}

	for i := range b.N {
		b.StopTimer()
		global := olmtest.NewNamespace(b, env, "bench-catalogs")
		olmtest.Create(b, env, &v1alpha1.CatalogSource{
			ObjectMeta: metav1.ObjectMeta{Namespace: global, Name: "bench"},
			Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: image},
		})
		namespaces := make([]string, benchNamespaces)
		for n := range namespaces {
			namespaces[n] = olmtest.NewNamespace(b, env, fmt.Sprintf("bench%d", i))
			olmtest.OwnGroup(b, env, namespaces[n])
		}
		ctx, cancel := context.WithCancel(context.Background())
		kubelet := make(chan struct{})
		go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, namespaces...); close(kubelet) }()

		b.StartTimer()
		start := time.Now()
		m := olmtest.StartManager(b, env, olm.Options{GlobalCatalogNamespace: global, CatalogImages: reg.ImageOptions(catalogImages(b))})
		for n, ns := range namespaces {
			for s := range subscriptionsPerNamespace {
				pkg := fmt.Sprintf("bench%02d", (n*subscriptionsPerNamespace+s)%benchPackages)
				olmtest.Create(b, env, &v1alpha1.Subscription{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg},
					Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "bench", CatalogSourceNamespace: global, Package: pkg, Channel: "stable"},
				})
			}
		}
		waitSteady(b, env, namespaces)
		elapsed := time.Since(start)
		b.StopTimer()

		b.ReportMetric(elapsed.Seconds(), "s-to-steady-state")
		b.ReportMetric(float64(m.Requests.Load()), "api-requests")
		if rss, ok := olmtest.PeakRSS(); ok {
			b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
		}
		m.Stop(b)
		cancel()
		<-kubelet
	}
}

func catalogImages(b *testing.B) catalog.ImageOptions {
	return catalog.ImageOptions{CacheDir: b.TempDir()}
}

// waitSteady waits until every Subscription of the namespaces is AtLatestKnown at its
// channel head and the CSV Succeeded.
func waitSteady(b *testing.B, env *testenv.Env, namespaces []string) {
	b.Helper()
	head := fmt.Sprintf(".v1.%d.0", benchVersions-1)
	deadline := time.Now().Add(20 * time.Minute)
	for {
		pending, example := 0, ""
		for _, ns := range namespaces {
			var subs v1alpha1.SubscriptionList
			if err := env.Client.List(context.Background(), &subs, client.InNamespace(ns)); err != nil {
				b.Fatal(err)
			}
			var csvs v1alpha1.ClusterServiceVersionList
			if err := env.Client.List(context.Background(), &csvs, client.InNamespace(ns)); err != nil {
				b.Fatal(err)
			}
			succeeded := map[string]bool{}
			for _, c := range csvs.Items {
				succeeded[c.Name] = c.Status.Phase == v1alpha1.CSVPhaseSucceeded
			}
			for _, s := range subs.Items {
				if s.Status.State != v1alpha1.SubscriptionStateAtLatest || s.Status.InstalledCSV != s.Name+head || !succeeded[s.Status.InstalledCSV] {
					pending++
					example = fmt.Sprintf("%s/%s: %s %q %+v", ns, s.Name, s.Status.State, s.Status.InstalledCSV, s.Status.Conditions)
				}
			}
			if len(subs.Items) != subscriptionsPerNamespace {
				pending++
			}
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d Subscriptions not at steady state, e.g. %s", pending, example)
		}
		time.Sleep(time.Second)
	}
}
