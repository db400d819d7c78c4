package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

func csv(ns, name, version string, phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason) *v1alpha1.ClusterServiceVersion {
	return &v1alpha1.ClusterServiceVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.ClusterServiceVersionSpec{Version: v1alpha1.OperatorVersion(version)},
		Status:     v1alpha1.ClusterServiceVersionStatus{Phase: phase, Reason: reason},
	}
}

func TestCSVVersion(t *testing.T) {
	tests := map[string]string{
		"":        "0.0.0",
		"0.9.4":   "0.9.4",
		"v1.2":    "1.2.0",
		"1.0.0-1": "1.0.0-1",
		"not-one": "not-one",
	}
	for in, want := range tests {
		if got := metrics.CSVVersion(csv("ns", "a", in, "", "")); got != want {
			t.Errorf("CSVVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEmitCSV walks a CSV through the phases OLM records and checks the series after each write.
func TestEmitCSV(t *testing.T) {
	t.Cleanup(func() { metrics.ForgetCSV("emit", "etcd") })
	steps := []struct {
		phase  v1alpha1.ClusterServiceVersionPhase
		reason v1alpha1.ConditionReason
		want   string
	}{
		{v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, `
csv_abnormal{name="etcd",namespace="emit",phase="Pending",reason="RequirementsUnknown",version="0.9.4"} 1
csv_succeeded{name="etcd",namespace="emit",version="0.9.4"} 0
`},
		{v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonInstallSuccessful, `
csv_abnormal{name="etcd",namespace="emit",phase="Installing",reason="InstallSucceeded",version="0.9.4"} 1
csv_succeeded{name="etcd",namespace="emit",version="0.9.4"} 0
`},
		{v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, `
csv_succeeded{name="etcd",namespace="emit",version="0.9.4"} 1
`},
	}
	var before *v1alpha1.ClusterServiceVersion
	for _, s := range steps {
		after := csv("emit", "etcd", "0.9.4", s.phase, s.reason)
		metrics.EmitCSV(before, after)
		before = after
		got := filterSeries(t, "emit")
		if got != strings.TrimSpace(s.want) {
			t.Errorf("after %s/%s:\ngot\n%s\nwant\n%s", s.phase, s.reason, got, strings.TrimSpace(s.want))
		}
	}
	metrics.ForgetCSV("emit", "etcd")
	if got := filterSeries(t, "emit"); got != "" {
		t.Errorf("after ForgetCSV: series left:\n%s", got)
	}
}

func TestEmitCSVSkipsCopies(t *testing.T) {
	metrics.EmitCSV(nil, csv("copies", "etcd", "1.0.0", v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonCopied))
	if got := filterSeries(t, "copies"); got != "" {
		t.Errorf("a copy was recorded:\n%s", got)
	}
}

func TestSubscriptionSynced(t *testing.T) {
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sub-sync-test"}}
	sub.Spec.Package, sub.Spec.Channel = "etcd", "alpha"
	metrics.SubscriptionSynced(sub)
	metrics.SubscriptionSynced(sub)
	if got := testutil.ToFloat64(metrics.SubscriptionSyncTotal.WithLabelValues("sub-sync-test", "", "alpha", "etcd", "")); got != 2 {
		t.Errorf("count = %v, want 2", got)
	}
	sub.Status.InstalledCSV = "etcdoperator.v0.9.4"
	metrics.SubscriptionSynced(sub)
	if n := testutil.CollectAndCount(metrics.SubscriptionSyncTotal); n != 1 {
		t.Errorf("series after the installed CSV changed = %d, want 1 (the old one removed)", n)
	}
	if got := testutil.ToFloat64(metrics.SubscriptionSyncTotal.WithLabelValues("sub-sync-test", "etcdoperator.v0.9.4", "alpha", "etcd", "")); got != 1 {
		t.Errorf("new series = %v, want 1", got)
	}
	metrics.ForgetSubscription("ns", "sub-sync-test")
	if n := testutil.CollectAndCount(metrics.SubscriptionSyncTotal); n != 0 {
		t.Errorf("series after ForgetSubscription = %d, want 0", n)
	}
}

// TestRegistered checks that every OLM metric is served by controller-runtime's registry.
func TestRegistered(t *testing.T) {
	metrics.CSVUpgradeCount.Add(0)
	metrics.CSVSucceeded.WithLabelValues("reg", "a", "1.0.0").Set(1)
	t.Cleanup(func() { metrics.ForgetCSV("reg", "a") })
	metrics.CSVAbnormal.WithLabelValues("reg", "a", "1.0.0", "Failed", "X").Set(1)
	metrics.SubscriptionSyncTotal.WithLabelValues("reg", "", "", "", "").Inc()
	t.Cleanup(func() { metrics.SubscriptionSyncTotal.Reset() })
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, want := range []string{"csv_count", "csv_succeeded", "csv_abnormal", "csv_upgrade_count",
		"install_plan_count", "subscription_count", "subscription_sync_total", "catalog_source_count"} {
		if !names[want] {
			t.Errorf("%s is not registered on controller-runtime's registry", want)
		}
	}
}

// filterSeries returns the csv_abnormal and csv_succeeded series of namespace, one per line, sorted.
func filterSeries(t *testing.T, namespace string) string {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range families {
		if f.GetName() != "csv_abnormal" && f.GetName() != "csv_succeeded" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			var parts []string
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
				parts = append(parts, l.GetName()+"=\""+l.GetValue()+"\"")
			}
			if labels["namespace"] != namespace {
				continue
			}
			lines = append(lines, f.GetName()+"{"+strings.Join(parts, ",")+"} "+trimFloat(m.GetGauge().GetValue()))
		}
	}
	return strings.Join(lines, "\n")
}

func trimFloat(v float64) string {
	if v == 1 {
		return "1"
	}
	return "0"
}
