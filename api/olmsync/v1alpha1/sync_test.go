package v1alpha1_test

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// The Sync must work with fluxcd/pkg/runtime's conditions helpers, which the reconciler
// uses for every condition it writes.
var (
	_ conditions.Getter = &olmsyncv1alpha1.Sync{}
	_ conditions.Setter = &olmsyncv1alpha1.Sync{}
)

func TestConditionsThroughFluxHelpers(t *testing.T) {
	obj := &olmsyncv1alpha1.Sync{}
	conditions.MarkReconciling(obj, olmsyncv1alpha1.ProgressingReason, "fetching %s", "main")
	conditions.MarkFalse(obj, olmsyncv1alpha1.ReadyCondition, olmsyncv1alpha1.PolicyViolationReason, "%d objects gated", 2)
	conditions.MarkTrue(obj, olmsyncv1alpha1.FetchFailedCondition, olmsyncv1alpha1.GitUnreachableReason, "connection refused")

	if !conditions.IsReconciling(obj) {
		t.Error("Reconciling not set")
	}
	if got := conditions.GetReason(obj, olmsyncv1alpha1.ReadyCondition); got != olmsyncv1alpha1.PolicyViolationReason {
		t.Errorf("Ready reason = %q", got)
	}
	if got := conditions.GetMessage(obj, olmsyncv1alpha1.ReadyCondition); got != "2 objects gated" {
		t.Errorf("Ready message = %q", got)
	}
	conditions.Delete(obj, olmsyncv1alpha1.ReconcilingCondition)
	if conditions.Has(obj, olmsyncv1alpha1.ReconcilingCondition) {
		t.Error("Reconciling still there after Delete")
	}
	if n := len(obj.Status.Conditions); n != 2 {
		t.Errorf("%d conditions stored, want 2: %+v", n, obj.Status.Conditions)
	}
}

func TestDurations(t *testing.T) {
	d := func(s string) metav1.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return metav1.Duration{Duration: v}
	}
	cases := []struct {
		name             string
		interval, source string
		timeout          *metav1.Duration
		wantRequeue      time.Duration
		wantTimeout      time.Duration
	}{
		{name: "fetch more often than drift", interval: "10m", source: "1m", wantRequeue: time.Minute, wantTimeout: olmsyncv1alpha1.DefaultFetchTimeout},
		{name: "drift more often than fetch", interval: "30s", source: "5m", wantRequeue: 30 * time.Second, wantTimeout: olmsyncv1alpha1.DefaultFetchTimeout},
		{name: "timeout set", interval: "5m", source: "5m", timeout: &metav1.Duration{Duration: 20 * time.Second}, wantRequeue: 5 * time.Minute, wantTimeout: 20 * time.Second},
		{name: "zero timeout means default", interval: "5m", source: "5m", timeout: &metav1.Duration{}, wantRequeue: 5 * time.Minute, wantTimeout: olmsyncv1alpha1.DefaultFetchTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &olmsyncv1alpha1.Sync{Spec: olmsyncv1alpha1.SyncSpec{
				Interval: d(tc.interval),
				Source:   olmsyncv1alpha1.GitSource{Interval: d(tc.source), Timeout: tc.timeout},
			}}
			if got := obj.GetRequeueAfter(); got != tc.wantRequeue {
				t.Errorf("GetRequeueAfter = %s, want %s", got, tc.wantRequeue)
			}
			if got := obj.FetchTimeout(); got != tc.wantTimeout {
				t.Errorf("FetchTimeout = %s, want %s", got, tc.wantTimeout)
			}
		})
	}
}

func TestPolicyModeDefaultsToEnforce(t *testing.T) {
	for mode, want := range map[olmsyncv1alpha1.PolicyMode]olmsyncv1alpha1.PolicyMode{
		"": olmsyncv1alpha1.PolicyModeEnforce, "enforce": olmsyncv1alpha1.PolicyModeEnforce, "audit": olmsyncv1alpha1.PolicyModeAudit,
	} {
		obj := &olmsyncv1alpha1.Sync{Spec: olmsyncv1alpha1.SyncSpec{Policy: olmsyncv1alpha1.PolicySpec{Mode: mode}}}
		if got := obj.PolicyMode(); got != want {
			t.Errorf("mode %q reads as %q, want %q", mode, got, want)
		}
	}
}
