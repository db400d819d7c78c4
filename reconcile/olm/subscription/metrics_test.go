package subscription_test

import (
	"context"
	"fmt"
	"testing"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
)

// family gathers one metric family from controller-runtime's registry, where the manager's
// metrics endpoint serves it.
func family(t *testing.T, name string) *dto.MetricFamily {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// series finds the metric of a family with these label values.
func series(f *dto.MetricFamily, labels map[string]string) *dto.Metric {
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		match := 0
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
				match++
			}
		}
		if match == len(labels) {
			return m
		}
	}
	return nil
}

// TestOLMMetrics: the catalog operator's metrics with OLM's names, types, labels and help
// texts (OLM pkg/metrics/metrics.go:147-161 and 195-202), set where OLM sets them:
// catalogsource_ready at each connection state (operator.go:820) and gone with the
// CatalogSource (operator.go:936); catalog_source_snapshots_total each time resolution takes
// a catalog's content anew (source_registry.go:150); olm_resolution_duration_seconds for each
// resolution, by outcome (operator.go:226).
func TestOLMMetrics(t *testing.T) {
	env, ns, _ := flow(t)
	olmtest.ConfigMapCatalog(t, env, ns, "cat", widget("1.0.0"))
	subscribe(t, env, ns, "widget", "widget")
	waitInstalled(t, env, ns, "widget", "widget.v1.0.0")
	subscribe(t, env, ns, "nothing", "no-such-package")
	olmtest.Eventually(t, "the missing package's resolution fails", func() error {
		if m := series(family(t, "olm_resolution_duration_seconds"), map[string]string{"outcome": "failed"}); m == nil || m.GetSummary().GetSampleCount() == 0 {
			return fmt.Errorf("no failed resolution observed")
		}
		return nil
	})

	want := map[string]struct {
		help string
		typ  dto.MetricType
	}{
		"catalogsource_ready":             {"State of a CatalogSource. 1 indicates that the CatalogSource is in a READY state. 0 indicates CatalogSource is in a Non READY state.", dto.MetricType_GAUGE},
		"catalog_source_snapshots_total":  {"The number of times the catalog operator has requested a snapshot of data from a catalog source", dto.MetricType_COUNTER},
		"olm_resolution_duration_seconds": {"The duration of a dependency resolution attempt", dto.MetricType_SUMMARY},
	}
	for name, w := range want {
		f := family(t, name)
		if f == nil {
			t.Errorf("%s is not registered", name)
			continue
		}
		if f.GetHelp() != w.help || f.GetType() != w.typ {
			t.Errorf("%s: help %q type %v, want %q %v", name, f.GetHelp(), f.GetType(), w.help, w.typ)
		}
	}
	cat := map[string]string{"namespace": ns, "name": "cat"}
	if m := series(family(t, "catalogsource_ready"), cat); m == nil || m.GetGauge().GetValue() != 1 {
		t.Errorf("catalogsource_ready{namespace=%q,name=cat} = %v, want 1", ns, m)
	}
	if m := series(family(t, "catalog_source_snapshots_total"), cat); m == nil || m.GetCounter().GetValue() < 1 {
		t.Errorf("catalog_source_snapshots_total{namespace=%q,name=cat} = %v, want at least 1", ns, m)
	}
	ok := series(family(t, "olm_resolution_duration_seconds"), map[string]string{"outcome": "succeeded"})
	if ok == nil || ok.GetSummary().GetSampleCount() == 0 {
		t.Errorf("no succeeded resolution observed: %v", ok)
	}
	var quantiles []float64
	for _, q := range ok.GetSummary().GetQuantile() {
		quantiles = append(quantiles, q.GetQuantile())
	}
	if fmt.Sprint(quantiles) != "[0.9 0.95 0.99]" {
		t.Errorf("quantiles %v, want OLM's objectives 0.9, 0.95, 0.99", quantiles)
	}

	if err := env.Client.Delete(context.Background(), &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cat"}}); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "catalogsource_ready of the deleted CatalogSource gone", func() error {
		if m := series(family(t, "catalogsource_ready"), cat); m != nil {
			return fmt.Errorf("still %v", m)
		}
		return nil
	})
}
