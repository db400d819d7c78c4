package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

func syncObj(name string, ready metav1.ConditionStatus, suspend bool) *olmsyncv1alpha1.Sync {
	s := &olmsyncv1alpha1.Sync{ObjectMeta: metav1.ObjectMeta{Namespace: "olmsync-system", Name: name}}
	s.Spec.Source.URL = "https://git.example.com/platform/clusters.git"
	s.Spec.Suspend = suspend
	s.Status.LastAppliedRevision = "main@sha1:9fceb02d0ae598e95dc970b74767f19372d61af8"
	s.Status.Conditions = []metav1.Condition{{Type: olmsyncv1alpha1.ReadyCondition, Status: ready, Reason: "ReconciliationSucceeded"}}
	return s
}

func TestInfoGauge(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := NewRecorder().MustRegister(reg)
	start := time.Now().Add(-1500 * time.Millisecond)

	r.RecordReconcile(syncObj("platform", metav1.ConditionFalse, false), start)
	// The Sync becomes ready: its info series is replaced, not joined by a second one.
	r.RecordReconcile(syncObj("platform", metav1.ConditionTrue, false), start)
	r.RecordReconcile(syncObj("paused", metav1.ConditionTrue, true), start)

	want := `
# HELP gotk_resource_info The current state of a GitOps Toolkit resource.
# TYPE gotk_resource_info gauge
gotk_resource_info{customresource_kind="Sync",exported_namespace="olmsync-system",name="paused",ready="True",revision="main@sha1:9fceb02d0ae598e95dc970b74767f19372d61af8",suspended="true",url="https://git.example.com/platform/clusters.git"} 1
gotk_resource_info{customresource_kind="Sync",exported_namespace="olmsync-system",name="platform",ready="True",revision="main@sha1:9fceb02d0ae598e95dc970b74767f19372d61af8",suspended="false",url="https://git.example.com/platform/clusters.git"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gotk_resource_info"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(r.flux.Collectors()[2], "gotk_reconcile_duration_seconds"); n != 2 {
		t.Errorf("gotk_reconcile_duration_seconds has %d series, want one per Sync (2)", n)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}

	r.Forget(syncObj("platform", metav1.ConditionTrue, false))
	if n := testutil.CollectAndCount(r.info); n != 1 {
		t.Errorf("after Forget: %d info series, want 1", n)
	}
}

func TestCounters(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := NewRecorder().MustRegister(reg)
	s := syncObj("platform", metav1.ConditionTrue, false)
	r.RecordFetch(s, 120*time.Millisecond, nil)
	r.RecordFetch(s, 3*time.Second, errors.New("unreachable"))
	r.RecordApplied(s, "Created", 8)
	r.RecordApplied(s, "Configured", 2)
	r.RecordApplied(s, "Configured", 1)
	r.RecordApplied(s, "Unchanged", 0)
	r.RecordPruned(s, 3)

	want := `
# HELP olmsync_objects_applied_total Objects a Sync created or changed with server-side apply.
# TYPE olmsync_objects_applied_total counter
olmsync_objects_applied_total{action="Configured",exported_namespace="olmsync-system",name="platform"} 3
olmsync_objects_applied_total{action="Created",exported_namespace="olmsync-system",name="platform"} 8
# HELP olmsync_objects_pruned_total Objects a Sync deleted because its repository no longer renders them.
# TYPE olmsync_objects_pruned_total counter
olmsync_objects_pruned_total{exported_namespace="olmsync-system",name="platform"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "olmsync_objects_applied_total", "olmsync_objects_pruned_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(r.fetchDuration); n != 2 {
		t.Errorf("fetch duration has %d series, want success and failure", n)
	}
	r.Forget(s)
	for name, c := range map[string]prometheus.Collector{"fetch": r.fetchDuration, "applied": r.objectsApplied, "pruned": r.objectsPruned} {
		if n := testutil.CollectAndCount(c); n != 0 {
			t.Errorf("after Forget: %d %s series, want none", n, name)
		}
	}
}

func TestRegistersOnControllerRuntimesRegistry(t *testing.T) {
	r := NewRecorder().MustRegister(nil)
	t.Cleanup(func() {
		for _, c := range r.Collectors() {
			ctrlmetrics.Registry.Unregister(c)
		}
	})
	r.RecordReconcile(syncObj("platform", metav1.ConditionTrue, false), time.Now())
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range families {
		found[f.GetName()] = true
	}
	for _, name := range []string{"gotk_resource_info", "gotk_reconcile_duration_seconds", "gotk_suspend_status", "gotk_reconcile_condition"} {
		if !found[name] {
			t.Errorf("%s is not on controller-runtime's registry", name)
		}
	}
}
