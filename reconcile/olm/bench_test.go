package olm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

		// The floor (issue 18): the same objects written straight to the API server, with
		// no controller deciding anything, in the same run.
		written, n := writeOnly(b, env, namespaces, fmt.Sprintf("bench%d-w", i))
		b.ReportMetric(written.Seconds(), "s-write-only")
		b.ReportMetric(float64(n), "objects-written")
		b.ReportMetric(elapsed.Seconds()/written.Seconds(), "x-write-only")
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

// steadyKinds are the kinds the embedded OLM writes into a namespace on the way to steady
// state; writeOnly writes the same objects again.
var steadyKinds = []schema.GroupVersionKind{
	v1alpha1.SchemeGroupVersion.WithKind("Subscription"),
	v1alpha1.SchemeGroupVersion.WithKind("InstallPlan"),
	v1alpha1.SchemeGroupVersion.WithKind("ClusterServiceVersion"),
	{Group: "operators.coreos.com", Version: "v2", Kind: "OperatorCondition"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
}

// writeOnly is the benchmark's floor: it reads every object the controllers left in the
// namespaces and writes copies of them into as many new namespaces (prefix) — each object
// created, and its status written when it has one — with as many writers at once as the
// controllers have workers. It returns the time the writes took and how many objects it
// wrote. ServiceAccounts the namespaces had before are left out (the API server makes
// "default" itself).
func writeOnly(b *testing.B, env *testenv.Env, namespaces []string, prefix string) (time.Duration, int) {
	b.Helper()
	ctx := context.Background()
	var objs []*unstructured.Unstructured
	targets := make([]string, len(namespaces))
	for n, ns := range namespaces {
		targets[n] = olmtest.NewNamespace(b, env, prefix)
		for _, gvk := range steadyKinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
				b.Fatal(err)
			}
			for i := range list.Items {
				o := &list.Items[i]
				if gvk.Kind == "ServiceAccount" && o.GetName() == "default" {
					continue
				}
				c := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(),
					"metadata": map[string]any{"name": o.GetName(), "namespace": targets[n],
						"labels": toAny(o.GetLabels()), "annotations": toAny(o.GetAnnotations())},
				}}
				for k, v := range o.Object {
					if k != "metadata" && k != "apiVersion" && k != "kind" {
						c.Object[k] = v
					}
				}
				objs = append(objs, c)
			}
		}
	}
	b.StartTimer()
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(writeOnlyWorkers)
	for _, o := range objs {
		g.Go(func() error {
			status, hasStatus := o.Object["status"]
			delete(o.Object, "status")
			if err := env.Client.Create(ctx, o); err != nil {
				return fmt.Errorf("create %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
			}
			if !hasStatus {
				return nil
			}
			o.Object["status"] = status
			if err := env.Client.Status().Update(ctx, o); err != nil {
				return fmt.Errorf("status of %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
			}
			return nil
		})
	}
	err := g.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	return elapsed, len(objs)
}

// writeOnlyWorkers is how many objects writeOnly writes at once: about as many as the
// embedded OLM's controllers reconcile at once.
const writeOnlyWorkers = 8

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
