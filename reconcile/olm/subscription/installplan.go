package subscription

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
)

// SyncInstallPlan brings the InstallPlan conditions of a Subscription in line with the
// InstallPlan its status references (plan is nil when it was not found), as OLM's
// Subscription state machine does (subscription/state.go):
//
//   - plan not found while UpgradePending: the reference, currentCSV and state are cleared,
//     so that the next resolution makes a new plan (someone deleted the plan to retry);
//   - plan not found otherwise: InstallPlanMissing=True, ReferencedInstallPlanNotFound;
//   - phase "", Planning, RequiresApproval, Installing: InstallPlanPending=True with the
//     phase as reason (InstallPlanNotYetReconciled for "");
//   - phase Failed: InstallPlanFailed=True, reason taken from the plan's Installed=False
//     condition (usually InstallComponentFailed), else InstallPlanFailed;
//   - phase Complete: none of the three.
//
// A Subscription with no reference is left alone. It reports whether the status changed.
func SyncInstallPlan(sub *v1alpha1.Subscription, plan *v1alpha1.InstallPlan, now metav1.Time) bool {
	st := &sub.Status
	if st.InstallPlanRef == nil {
		return false
	}
	if plan == nil {
		changed := RemoveCondition(st, v1alpha1.SubscriptionInstallPlanPending, v1alpha1.SubscriptionInstallPlanFailed,
			v1alpha1.SubscriptionBundleUnpacking, v1alpha1.SubscriptionBundleUnpackFailed)
		if st.State == v1alpha1.SubscriptionStateUpgradePending {
			st.InstallPlanRef, st.Install, st.CurrentCSV = nil, nil, ""
			st.State = v1alpha1.SubscriptionStateNone
			changed = true
		} else {
			changed = SetCondition(st, v1alpha1.SubscriptionCondition{
				Type: v1alpha1.SubscriptionInstallPlanMissing, Status: corev1.ConditionTrue,
				Reason: v1alpha1.ReferencedInstallPlanNotFound,
			}, now) || changed
		}
		if changed {
			st.LastUpdated = now
		}
		return changed
	}

	changed := RemoveCondition(st, v1alpha1.SubscriptionInstallPlanMissing)
	want := planCondition(&plan.Status)
	for _, t := range []v1alpha1.SubscriptionConditionType{v1alpha1.SubscriptionInstallPlanPending, v1alpha1.SubscriptionInstallPlanFailed} {
		if want == nil || want.Type != t {
			changed = RemoveCondition(st, t) || changed
		}
	}
	if want != nil {
		changed = SetCondition(st, *want, now) || changed
	}
	changed = syncUnpackConditions(st, &plan.Status, now) || changed
	if changed {
		st.LastUpdated = now
	}
	return changed
}

// syncUnpackConditions sets the Subscription's bundle-unpacking conditions from the
// plan's bundle lookups, with OLM's types, reasons and message format: BundleUnpackFailed
// (reason BundleUnpackFailed, "bundle unpacking failed. Reason: <reason>, and Message:
// <message>") when one failed, BundleUnpacking (UnpackingInProgress) while one is pending,
// neither once all are in the plan. Where OLM leaves the reader to find its unpack Job,
// olmsync says what went wrong: the failed message is followed by the last error of the
// unpacking, and the pending condition's message names the bundles whose pulls fail.
func syncUnpackConditions(st *v1alpha1.SubscriptionStatus, ps *v1alpha1.InstallPlanStatus, now metav1.Time) bool {
	var pending []string
	anyPending := false
	for i := range ps.BundleLookups {
		l := &ps.BundleLookups[i]
		if installplan.StateOf(l) != installplan.LookupPending {
			continue
		}
		anyPending = true
		if detail := installplan.LastUnpackError(l); detail != "" {
			pending = append(pending, l.Identifier+": "+detail)
		}
	}
	if l, failed := installplan.FailedLookup(ps.BundleLookups); l != nil {
		msg := fmt.Sprintf(v1alpha1.MessageBundleUnpackFailed, failed.Reason, failed.Message)
		if detail := installplan.LastUnpackError(l); detail != "" && detail != failed.Message {
			msg += ". " + detail
		}
		changed := RemoveCondition(st, v1alpha1.SubscriptionBundleUnpacking)
		return SetCondition(st, v1alpha1.SubscriptionCondition{
			Type: v1alpha1.SubscriptionBundleUnpackFailed, Status: corev1.ConditionTrue,
			Reason: v1alpha1.BundleUnpackFailed, Message: msg,
		}, now) || changed
	}
	if anyPending {
		changed := RemoveCondition(st, v1alpha1.SubscriptionBundleUnpackFailed)
		return SetCondition(st, v1alpha1.SubscriptionCondition{
			Type: v1alpha1.SubscriptionBundleUnpacking, Status: corev1.ConditionTrue,
			Reason: v1alpha1.UnpackingInProgress, Message: strings.Join(pending, "; "),
		}, now) || changed
	}
	return RemoveCondition(st, v1alpha1.SubscriptionBundleUnpacking, v1alpha1.SubscriptionBundleUnpackFailed)
}

// planCondition is the Subscription condition an InstallPlan's phase calls for, or nil.
func planCondition(ps *v1alpha1.InstallPlanStatus) *v1alpha1.SubscriptionCondition {
	switch ps.Phase {
	case v1alpha1.InstallPlanPhaseNone, v1alpha1.InstallPlanPhasePlanning,
		v1alpha1.InstallPlanPhaseRequiresApproval, v1alpha1.InstallPlanPhaseInstalling:
		reason := string(ps.Phase)
		if ps.Phase == v1alpha1.InstallPlanPhaseNone {
			reason = v1alpha1.InstallPlanNotYetReconciled
		}
		return &v1alpha1.SubscriptionCondition{
			Type: v1alpha1.SubscriptionInstallPlanPending, Status: corev1.ConditionTrue,
			Reason: reason, Message: planMessage(ps),
		}
	case v1alpha1.InstallPlanPhaseFailed:
		reason := v1alpha1.InstallPlanFailed
		if c := installedCondition(ps); c != nil && c.Status == corev1.ConditionFalse && c.Reason != "" {
			reason = string(c.Reason)
		}
		return &v1alpha1.SubscriptionCondition{
			Type: v1alpha1.SubscriptionInstallPlanFailed, Status: corev1.ConditionTrue,
			Reason: reason, Message: planMessage(ps),
		}
	}
	return nil
}

func installedCondition(ps *v1alpha1.InstallPlanStatus) *v1alpha1.InstallPlanCondition {
	for i := range ps.Conditions {
		if ps.Conditions[i].Type == v1alpha1.InstallPlanInstalled {
			return &ps.Conditions[i]
		}
	}
	return nil
}

// planMessage is the message OLM projects from a plan: its Installed condition's message,
// else the messages of its pending bundle lookups.
func planMessage(ps *v1alpha1.InstallPlanStatus) string {
	if c := installedCondition(ps); c != nil && c.Status != corev1.ConditionUnknown && c.Message != "" {
		return c.Message
	}
	var msgs []string
	for _, l := range ps.BundleLookups {
		for _, c := range l.Conditions {
			if c.Type == v1alpha1.BundleLookupPending && c.Status != corev1.ConditionUnknown && c.Message != "" {
				msgs = append(msgs, c.Message+".")
			}
		}
	}
	return strings.Join(msgs, " ")
}

// DefaultFailedPlanRetryInterval is how long a Subscription keeps a Failed InstallPlan that
// wrote nothing before it lets the next resolution make a new one.
const DefaultFailedPlanRetryInterval = time.Minute

// ReleaseFailedPlan lets go of the InstallPlan a Subscription refers to when that plan Failed
// having written nothing (installplan.WroteNothing: a CRD update refused before any step, a
// bundle that could not be unpacked) and has been Failed for at least after: the reference
// is cleared, currentCSV goes back to the installed CSV (AtLatestKnown, or no state when
// nothing is installed), and the next resolution makes a new plan — which succeeds once the
// cause is gone (the custom resources that blocked a CRD update removed, a fixed catalog).
// The InstallPlanFailed condition stays until the new plan is referenced. OLM keeps the
// failed plan, and the Subscription stuck on it, until someone deletes one of them; olmsync
// retries because the objects in Git ask for the operator and nothing of the plan was applied.
//
// It reports whether the status changed and, while the plan is kept, how long until it may
// be released.
func ReleaseFailedPlan(sub *v1alpha1.Subscription, plan *v1alpha1.InstallPlan, now metav1.Time, after time.Duration) (bool, time.Duration) {
	st := &sub.Status
	if st.InstallPlanRef == nil || plan == nil || !installplan.WroteNothing(plan) {
		return false, 0
	}
	if c := installedCondition(&plan.Status); c != nil && c.LastTransitionTime != nil {
		if waited := now.Sub(c.LastTransitionTime.Time); waited < after {
			return false, after - waited
		}
	}
	st.InstallPlanRef, st.Install = nil, nil
	st.CurrentCSV, st.State = st.InstalledCSV, v1alpha1.SubscriptionStateNone
	if st.InstalledCSV != "" {
		st.State = v1alpha1.SubscriptionStateAtLatest
	}
	st.LastUpdated = now
	return true, 0
}
