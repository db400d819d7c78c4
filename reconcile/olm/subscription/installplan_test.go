package subscription_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

func plan(phase v1alpha1.InstallPlanPhase, conds ...v1alpha1.InstallPlanCondition) *v1alpha1.InstallPlan {
	ip := &v1alpha1.InstallPlan{}
	ip.Namespace, ip.Name = "ns", "install-1"
	ip.Status.Phase, ip.Status.Conditions = phase, conds
	return ip
}

func TestSyncInstallPlan(t *testing.T) {
	failedInstall := v1alpha1.InstallPlanCondition{Type: v1alpha1.InstallPlanInstalled, Status: corev1.ConditionFalse, Reason: v1alpha1.InstallPlanReasonComponentFailed, Message: "error creating csv a.v1.0.0: forbidden"}
	lookup := plan(v1alpha1.InstallPlanPhaseInstalling)
	lookup.Status.BundleLookups = []v1alpha1.BundleLookup{
		{Conditions: []v1alpha1.BundleLookupCondition{{Type: v1alpha1.BundleLookupPending, Status: corev1.ConditionTrue, Message: "unpack job not completed"}}},
		{Conditions: []v1alpha1.BundleLookupCondition{{Type: v1alpha1.BundleLookupPending, Status: corev1.ConditionTrue, Message: "unpack job not yet started"}}},
	}
	tests := []struct {
		name                     string
		sub                      *v1alpha1.Subscription
		plan                     *v1alpha1.InstallPlan
		pending, failed, missing string
		state                    v1alpha1.SubscriptionState
		ref                      bool
	}{
		{"no plan referenced", sub("s", "a"), nil, "-", "-", "-", "", false},
		{"not yet reconciled", sub("s", "a", pending("a.v1.0.0", "install-1")), plan(""), "True/InstallPlanNotYetReconciled", "-", "-", v1alpha1.SubscriptionStateUpgradePending, true},
		{"waiting for approval", sub("s", "a", pending("a.v1.0.0", "install-1")), plan(v1alpha1.InstallPlanPhaseRequiresApproval), "True/RequiresApproval", "-", "-", v1alpha1.SubscriptionStateUpgradePending, true},
		{"installing with bundle lookups", sub("s", "a", pending("a.v1.0.0", "install-1")), lookup, "True/Installing: unpack job not completed. unpack job not yet started.", "-", "-", v1alpha1.SubscriptionStateUpgradePending, true},
		{"failed", sub("s", "a", pending("a.v1.0.0", "install-1")), plan(v1alpha1.InstallPlanPhaseFailed, failedInstall), "-", "True/InstallComponentFailed: error creating csv a.v1.0.0: forbidden", "-", v1alpha1.SubscriptionStateUpgradePending, true},
		{"failed without a condition", sub("s", "a", pending("a.v1.0.0", "install-1")), plan(v1alpha1.InstallPlanPhaseFailed), "-", "True/InstallPlanFailed", "-", v1alpha1.SubscriptionStateUpgradePending, true},
		{"complete", sub("s", "a", pending("a.v1.0.0", "install-1"), func(s *v1alpha1.Subscription) {
			s.Status.Conditions = []v1alpha1.SubscriptionCondition{{Type: v1alpha1.SubscriptionInstallPlanPending, Status: corev1.ConditionTrue, Reason: "Installing"}}
		}), plan(v1alpha1.InstallPlanPhaseComplete), "-", "-", "-", v1alpha1.SubscriptionStateUpgradePending, true},
		{"deleted while pending: resolve again", sub("s", "a", pending("a.v1.0.0", "install-1")), nil, "-", "-", "-", "", false},
		{"deleted after install", sub("s", "a", pending("a.v1.0.0", "install-1"), installed("a.v1.0.0")), nil, "-", "-", "True/ReferencedInstallPlanNotFound", v1alpha1.SubscriptionStateAtLatest, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subscription.SyncInstallPlan(tt.sub, tt.plan, t1)
			got := []string{cond(tt.sub, v1alpha1.SubscriptionInstallPlanPending), cond(tt.sub, v1alpha1.SubscriptionInstallPlanFailed), cond(tt.sub, v1alpha1.SubscriptionInstallPlanMissing)}
			if want := []string{tt.pending, tt.failed, tt.missing}; !equal(got, want) {
				t.Errorf("pending/failed/missing %q, want %q", got, want)
			}
			if tt.sub.Status.State != tt.state || (tt.sub.Status.InstallPlanRef != nil) != tt.ref {
				t.Errorf("state %q ref %v; want %q, ref %t", tt.sub.Status.State, tt.sub.Status.InstallPlanRef, tt.state, tt.ref)
			}
			if !tt.ref && tt.sub.Status.CurrentCSV != "" {
				t.Errorf("currentCSV %q kept without a plan", tt.sub.Status.CurrentCSV)
			}
			if subscription.SyncInstallPlan(tt.sub, tt.plan, t1) {
				t.Error("a second pass over the same plan changes nothing")
			}
		})
	}
}

func TestSetConditionKeepsTransitionTime(t *testing.T) {
	st := &v1alpha1.SubscriptionStatus{}
	c := v1alpha1.SubscriptionCondition{Type: v1alpha1.SubscriptionInstallPlanPending, Status: corev1.ConditionTrue, Reason: "RequiresApproval"}
	if !subscription.SetCondition(st, c, t0) {
		t.Fatal("first set: no change")
	}
	c.Reason = "Installing"
	if !subscription.SetCondition(st, c, t1) {
		t.Fatal("new reason: no change")
	}
	if got := st.Conditions[0].LastTransitionTime; !got.Equal(&t0) {
		t.Errorf("the status did not flip, the transition time moved to %v", got)
	}
	c.Status = corev1.ConditionFalse
	subscription.SetCondition(st, c, t1)
	if got := st.Conditions[0].LastTransitionTime; !got.Equal(&t1) {
		t.Errorf("the status flipped, the transition time stayed %v", got)
	}
	if !subscription.RemoveCondition(st, c.Type) || st.Conditions != nil || subscription.RemoveCondition(st, c.Type) {
		t.Errorf("remove: %+v", st.Conditions)
	}
}

// TestBundleUnpackConditions holds OLM's Subscription conditions of bundle unpacking
// (operator-lifecycle-manager pkg/controller/operators/catalog/operator.go): BundleUnpacking
// (UnpackingInProgress) while a lookup is pending, BundleUnpackFailed (BundleUnpackFailed,
// "bundle unpacking failed. Reason: …, and Message: …") once one failed — followed by the
// last error olmsync saw —, neither once all are unpacked.
func TestBundleUnpackConditions(t *testing.T) {
	lookup := func(conds ...v1alpha1.BundleLookupCondition) v1alpha1.BundleLookup {
		return v1alpha1.BundleLookup{Identifier: "a.v1.0.0", Path: "r.example/a@sha256:1", Conditions: conds}
	}
	notPersisted := v1alpha1.BundleLookupCondition{Type: "BundleLookupNotPersisted", Status: corev1.ConditionTrue, Reason: "BundleNotUnpacked"}
	pullFailed := v1alpha1.BundleLookupCondition{Type: "BundleLookupPending", Status: corev1.ConditionTrue, Reason: "JobIncomplete", Message: "unpack job not completed: GET https://r.example/v2/a/manifests/sha256:1: UNAUTHORIZED"}
	deadline := v1alpha1.BundleLookupCondition{Type: "BundleLookupFailed", Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline"}
	tests := []struct {
		name               string
		lookups            []v1alpha1.BundleLookup
		unpacking, failing string
	}{
		{"pending", []v1alpha1.BundleLookup{lookup(notPersisted, v1alpha1.BundleLookupCondition{Type: "BundleLookupPending", Status: corev1.ConditionTrue, Reason: "JobIncomplete", Message: "unpack job not completed"})},
			"True/UnpackingInProgress", "-"},
		{"pending after a failed pull", []v1alpha1.BundleLookup{lookup(notPersisted, pullFailed)},
			"True/UnpackingInProgress: a.v1.0.0: GET https://r.example/v2/a/manifests/sha256:1: UNAUTHORIZED", "-"},
		{"timed out", []v1alpha1.BundleLookup{lookup(notPersisted, pullFailed, deadline)},
			"-", "True/BundleUnpackFailed: bundle unpacking failed. Reason: DeadlineExceeded, and Message: Job was active longer than specified deadline. GET https://r.example/v2/a/manifests/sha256:1: UNAUTHORIZED"},
		{"not a bundle", []v1alpha1.BundleLookup{lookup(notPersisted, v1alpha1.BundleLookupCondition{Type: "BundleLookupFailed", Status: corev1.ConditionTrue, Reason: "UnpackFailed", Message: "no CSV"})},
			"-", "True/BundleUnpackFailed: bundle unpacking failed. Reason: UnpackFailed, and Message: no CSV"},
		{"unpacked", []v1alpha1.BundleLookup{lookup()}, "-", "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sub("s", "a", pending("a.v1.0.0", "install-1"))
			ip := plan(v1alpha1.InstallPlanPhaseInstalling)
			ip.Status.BundleLookups = tt.lookups
			subscription.SyncInstallPlan(s, ip, t1)
			if got := []string{cond(s, "BundleUnpacking"), cond(s, "BundleUnpackFailed")}; !equal(got, []string{tt.unpacking, tt.failing}) {
				t.Errorf("unpacking/failed %q, want %q", got, []string{tt.unpacking, tt.failing})
			}
		})
	}
}

// TestReleaseFailedPlan: a plan that failed having written nothing is kept for the retry
// interval, then released — currentCSV back to the installed CSV — so that a new resolution
// makes a new plan; a plan that wrote something is kept, as OLM keeps it.
func TestReleaseFailedPlan(t *testing.T) {
	now := metav1.Now()
	failedAt := metav1.NewTime(now.Add(-30 * time.Second))
	refused := plan(v1alpha1.InstallPlanPhaseFailed, v1alpha1.InstallPlanCondition{
		Type: v1alpha1.InstallPlanInstalled, Status: corev1.ConditionFalse, Reason: v1alpha1.InstallPlanReasonComponentFailed,
		Message:            `risk of data loss updating "widgets.example.com": new CRD removes version v1alpha1 that is listed as a stored version on the existing CRD`,
		LastTransitionTime: &failedAt,
	})
	refused.Status.Plan = []v1alpha1.Step{{Resource: v1alpha1.StepResource{Kind: "ClusterServiceVersion"}, Status: v1alpha1.StepStatusUnknown}}
	wrote := refused.DeepCopy()
	wrote.Status.Plan[0].Status = v1alpha1.StepStatusCreated

	s := sub("widget", "widget", installed("widget.v1.0.0"), pending("widget.v1.1.0", refused.Name))
	if changed, wait := subscription.ReleaseFailedPlan(s, refused, now, time.Minute); changed || wait != 30*time.Second {
		t.Errorf("within the interval: changed %v, wait %v; want false, 30s", changed, wait)
	}
	if changed, _ := subscription.ReleaseFailedPlan(s, wrote, now, 10*time.Second); changed {
		t.Error("a plan that wrote a step was released")
	}
	if changed, wait := subscription.ReleaseFailedPlan(s, refused, now, 10*time.Second); !changed || wait != 0 {
		t.Fatalf("past the interval: changed %v, wait %v", changed, wait)
	}
	st := s.Status
	if st.InstallPlanRef != nil || st.Install != nil || st.CurrentCSV != "widget.v1.0.0" || st.InstalledCSV != "widget.v1.0.0" || st.State != v1alpha1.SubscriptionStateAtLatest {
		t.Errorf("released status %+v", st)
	}

	fresh := sub("widget", "widget", pending("widget.v1.1.0", refused.Name))
	if changed, _ := subscription.ReleaseFailedPlan(fresh, refused, now, 0); !changed || fresh.Status.State != v1alpha1.SubscriptionStateNone || fresh.Status.CurrentCSV != "" {
		t.Errorf("a first install released: %v, status %+v", changed, fresh.Status)
	}
}
