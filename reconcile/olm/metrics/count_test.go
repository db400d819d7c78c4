package metrics_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// TestCountsAtScrapeTime: the *_count gauges are what the reader holds when they are read,
// with no reconcile in between, copied CSVs left out of csv_count; 0 before a reader is set.
func TestCountsAtScrapeTime(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).Build()
	counts := map[string]*metrics.CacheCount{
		"csv_count": metrics.CSVCount, "install_plan_count": metrics.InstallPlanCount,
		"subscription_count": metrics.SubscriptionCount, "catalog_source_count": metrics.CatalogSourceCount,
	}
	for name, c := range counts {
		c.CountFrom(nil)
		if v := testutil.ToFloat64(c); v != 0 {
			t.Errorf("%s = %v without a reader, want 0", name, v)
		}
		c.CountFrom(reader)
		t.Cleanup(func() { c.CountFrom(nil) })
	}

	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	copied := &v1alpha1.ClusterServiceVersion{ObjectMeta: meta("b", "etcd.v1")}
	copied.Labels = map[string]string{v1alpha1.CopiedLabelKey: "a"}
	for _, obj := range []client.Object{
		&v1alpha1.ClusterServiceVersion{ObjectMeta: meta("a", "etcd.v1")},
		&v1alpha1.ClusterServiceVersion{ObjectMeta: meta("a", "prometheus.v2")},
		copied,
		&v1alpha1.InstallPlan{ObjectMeta: meta("a", "install-1")},
		&v1alpha1.Subscription{ObjectMeta: meta("a", "etcd")},
		&v1alpha1.Subscription{ObjectMeta: meta("a", "prometheus")},
		&v1alpha1.Subscription{ObjectMeta: meta("b", "etcd")},
	} {
		if err := reader.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]float64{"csv_count": 2, "install_plan_count": 1, "subscription_count": 3, "catalog_source_count": 0}
	for name, c := range counts {
		if v := testutil.ToFloat64(c); v != want[name] {
			t.Errorf("%s = %v, want %v", name, v, want[name])
		}
	}

	// OLM's help texts (pkg/metrics/metrics.go), gauges, served by controller-runtime's registry.
	help := map[string]string{
		"csv_count":            "Number of CSVs successfully registered",
		"install_plan_count":   "Number of install plans",
		"subscription_count":   "Number of subscriptions",
		"catalog_source_count": "Number of catalog sources",
	}
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if h, ok := help[f.GetName()]; ok {
			if f.GetHelp() != h || f.GetType() != dto.MetricType_GAUGE || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetGauge().GetValue() != want[f.GetName()] {
				t.Errorf("%s: help %q, type %v, %v; want %q, a gauge of %v", f.GetName(), f.GetHelp(), f.GetType(), f.GetMetric(), h, want[f.GetName()])
			}
			delete(help, f.GetName())
		}
	}
	for name := range help {
		t.Errorf("%s is not served by controller-runtime's registry", name)
	}
}
