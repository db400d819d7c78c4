package subscription

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
)

// UpgradeHeld is olmsync's condition type for a Subscription whose installed CSV stays
// although it is not the channel head: True with reason UpgradeHeld (bundles that would
// replace it exist, but taking one would leave an API without a provider or break an
// installed operator) or NoUpgradePath (nothing in the channel replaces it). OLM says
// nothing in both cases; consoles and Argo CD's health check ignore condition types they
// do not know, so adding it changes nothing for them.
const UpgradeHeld v1alpha1.SubscriptionConditionType = "UpgradeHeld"

// SyncInstalledCSV follows status.currentCSV to the cluster, as OLM's
// ensureSubscriptionCSVState does: once a CSV of that name exists in the namespace it is the
// installed CSV and the Subscription is AtLatestKnown (until a resolution finds an upgrade);
// while it does not, the Subscription is UpgradePending — or, when the namespace fails
// forward (resolve.FailForwardEnabled) and the plan it refers to Failed, UpgradeFailed, so
// that the next resolution may supersede the failed plan with a new one.
//
// One difference, on purpose: when the CSV is gone although the InstallPlan that made it is
// Complete (someone deleted it), OLM leaves the Subscription UpgradePending for good;
// olmsync clears the references, so that the next resolution installs the operator again,
// as the Subscription in Git asks. It reports whether the status changed.
func SyncInstalledCSV(sub *v1alpha1.Subscription, csvExists bool, plan v1alpha1.InstallPlanPhase, failForward bool, now metav1.Time) bool {
	st := &sub.Status
	if st.CurrentCSV == "" {
		return false
	}
	if !csvExists && plan == v1alpha1.InstallPlanPhaseComplete {
		st.InstallPlanRef, st.Install = nil, nil
		st.CurrentCSV, st.InstalledCSV, st.State = "", "", v1alpha1.SubscriptionStateNone
		st.LastUpdated = now
		return true
	}
	installed, state := st.InstalledCSV, st.State
	if csvExists {
		installed = st.CurrentCSV
		if state != v1alpha1.SubscriptionStateUpgradeAvailable || st.InstalledCSV != st.CurrentCSV {
			state = v1alpha1.SubscriptionStateAtLatest
		}
	} else {
		state = pendingState(plan, failForward)
	}
	if installed == st.InstalledCSV && state == st.State {
		return false
	}
	st.InstalledCSV, st.State, st.LastUpdated = installed, state, now
	return true
}

// pendingState is the state of a Subscription whose currentCSV is not there yet, as OLM's
// ensureSubscriptionCSVState and ensureSubscriptionInstallPlanState decide it:
// UpgradeFailed when the namespace fails forward and the plan Failed, else UpgradePending.
func pendingState(plan v1alpha1.InstallPlanPhase, failForward bool) v1alpha1.SubscriptionState {
	if failForward && plan == v1alpha1.InstallPlanPhaseFailed {
		return v1alpha1.SubscriptionStateFailed
	}
	return v1alpha1.SubscriptionStateUpgradePending
}

// AdoptInstalledCSV makes a Subscription that has installed nothing yet take as its own the
// CSV of its package that is already in the namespace and that no other Subscription
// refers to: the operator a deleted Subscription left behind (OLM keeps a CSV when its
// Subscription is deleted), found again when the Subscription comes back, as `git revert`
// of its removal brings it back. It reports the CSV adopted, or "".
//
// A difference from OLM, on purpose: OLM's resolver fails such a Subscription with
// "clusterserviceversion <name> exists and is not referenced by a subscription", so that
// the operator can only be brought back by deleting the CSV first. Only a CSV whose
// properties say it is of the Subscription's package is adopted, never a copied one or
// one being deleted; resolution then upgrades from it along the channel as from any
// installed CSV.
func AdoptInstalledCSV(sub *v1alpha1.Subscription, subs []v1alpha1.Subscription, csvs []v1alpha1.ClusterServiceVersion, now metav1.Time) string {
	st := &sub.Status
	if st.InstalledCSV != "" || st.CurrentCSV != "" || st.InstallPlanRef != nil || sub.Spec.Package == "" {
		return ""
	}
	referenced := map[string]bool{}
	for i := range subs {
		if subs[i].Name != sub.Name {
			referenced[subs[i].Status.InstalledCSV] = true
			referenced[subs[i].Status.CurrentCSV] = true
		}
	}
	var found []*v1alpha1.ClusterServiceVersion
	for i := range csvs {
		c := &csvs[i]
		if referenced[c.Name] || groups.IsCopied(c) || !c.DeletionTimestamp.IsZero() || c.Status.Phase == v1alpha1.CSVPhaseReplacing {
			continue
		}
		if pkg, ok := resolve.PackageOfCSV(c); ok && pkg == sub.Spec.Package {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		return "" // none, or a replacement under way: let resolution decide
	}
	st.CurrentCSV, st.InstalledCSV, st.State, st.LastUpdated = found[0].Name, found[0].Name, v1alpha1.SubscriptionStateAtLatest, now
	return found[0].Name
}

// AdoptGeneratedPlan points a Subscription that an InstallPlan generated (its
// olm.generated-by annotation names the plan), and that refers
// to no plan yet, at that plan — UpgradePending, currentCSV its startingCSV — as OLM's
// ensureSubscriptionInstallPlanState does, so that it is not resolved into a second plan
// for the CSV its parent plan installs (UpgradeFailed instead when the namespace fails
// forward and the plan Failed). It reports whether the status changed.
func AdoptGeneratedPlan(sub *v1alpha1.Subscription, plans []v1alpha1.InstallPlan, failForward bool, now metav1.Time) bool {
	name := sub.Annotations[installplan.GeneratedByAnnotation]
	if name == "" || sub.Status.InstallPlanRef != nil {
		return false
	}
	for i := range plans {
		if plans[i].Name == name {
			PlanCreated(sub, &plans[i], sub.Spec.StartingCSV, now)
			sub.Status.State = pendingState(plans[i].Status.Phase, failForward)
			return true
		}
	}
	return false
}

// NeedsResolution reports whether a namespace's Subscriptions call for a resolution: OLM
// skips the pass when every Subscription waits on an InstallPlan it already has (a plan
// awaiting approval keeps its CSV; newer catalog content is picked up after it). A
// Subscription whose approval olmsync decides (a pin, first-automatic) is always resolved:
// a changed pin may approve the plan it waits on.
func NeedsResolution(subs []v1alpha1.Subscription) bool {
	for i := range subs {
		st := &subs[i].Status
		if st.InstallPlanRef == nil || st.State != v1alpha1.SubscriptionStateUpgradePending || decidesApproval(&subs[i]) {
			return true
		}
	}
	return false
}

func decidesApproval(sub *v1alpha1.Subscription) bool {
	return sub.Annotations[plans.PinnedCSVAnnotation] != "" || sub.Annotations[plans.ApprovalAnnotation] == plans.ApprovalFirstAutomatic
}

// ApprovesWaitingPlan reports whether olmsync now approves the plan a Subscription waits on:
// the plan is not approved yet, the Subscription's approval is olmsync's to decide (a pin,
// first-automatic), and the decision for its resolution approves (for instance because the
// pin moved forward).
func ApprovesWaitingPlan(sub *v1alpha1.Subscription, plan *v1alpha1.InstallPlan, r *resolve.SubscriptionResult) (plans.Approval, bool) {
	if plan == nil || plan.Spec.Approved || !decidesApproval(sub) || r == nil {
		return plans.Approval{}, false
	}
	if plan.Status.Phase != v1alpha1.InstallPlanPhaseRequiresApproval && plan.Status.Phase != v1alpha1.InstallPlanPhaseNone && plan.Status.Phase != v1alpha1.InstallPlanPhasePlanning {
		return plans.Approval{}, false
	}
	if r.Resolution.Status != resolve.StatusResolved || !slices.Contains(plan.Spec.ClusterServiceVersionNames, r.Resolution.Next) {
		return plans.Approval{}, false
	}
	a := plans.DecideApproval(sub, r)
	return a, a.Approved
}

// OperatorGroupsFailed marks every Subscription of a namespace that does not hold exactly
// one OperatorGroup as ResolutionFailed, as plans.OperatorGroupsFailure decides. It
// reports whether the status changed.
func OperatorGroupsFailed(sub *v1alpha1.Subscription, groups int, now metav1.Time) bool {
	f := plans.OperatorGroupsFailure(groups)
	if f == nil {
		return false
	}
	return setChanged(sub, SetCondition(&sub.Status, v1alpha1.SubscriptionCondition{
		Type: v1alpha1.SubscriptionResolutionFailed, Status: corev1.ConditionTrue, Reason: f.Reason, Message: f.Message,
	}, now), now)
}

// ApplyResolution writes what a resolution decided for one Subscription into its status
// and reports whether the Subscription needs a new InstallPlan (the caller then makes it
// and calls PlanCreated) and whether the status changed.
//
//   - Failed (ConstraintsNotSatisfiable, ErrorPreventedResolution): ResolutionFailed=True
//     with the reason and the resolver's message, as OLM writes it.
//   - Failed (UpgradeHeld, NoUpgradePath): the installed CSV stays; olmsync's UpgradeHeld
//     condition says why; the state is UpgradeAvailable when a replacement exists but is
//     held, AtLatestKnown when none exists (seed 002's meanings of the two states).
//   - UpToDate: AtLatestKnown.
//   - Resolved: UpgradeAvailable — a CSV replaces the installed one (or the first CSV is
//     known) and no InstallPlan exists for it yet — unless the Subscription already waits
//     on a plan for that very CSV.
//
// A successful resolution removes ResolutionFailed, as OLM's pass does; deprecation
// conditions follow the catalog's olm.deprecations entries.
func ApplyResolution(sub *v1alpha1.Subscription, r *resolve.SubscriptionResult, now metav1.Time) (needsPlan, changed bool) {
	st := &sub.Status
	res := r.Resolution
	switch {
	case res.Status == resolve.StatusFailed && (res.Reason == resolve.ReasonConstraintsNotSatisfiable || res.Reason == resolve.ReasonErrorPreventedResolution):
		changed = SetCondition(st, v1alpha1.SubscriptionCondition{
			Type: v1alpha1.SubscriptionResolutionFailed, Status: corev1.ConditionTrue,
			Reason: res.Reason, Message: res.Message,
		}, now)
		changed = RemoveCondition(st, UpgradeHeld) || changed
		return false, setChanged(sub, changed, now)
	case res.Status == resolve.StatusFailed:
		changed = RemoveCondition(st, v1alpha1.SubscriptionResolutionFailed)
		changed = SetCondition(st, v1alpha1.SubscriptionCondition{
			Type: UpgradeHeld, Status: corev1.ConditionTrue, Reason: res.Reason, Message: res.Message,
		}, now) || changed
		if st.InstalledCSV != "" && st.InstalledCSV == st.CurrentCSV {
			state := v1alpha1.SubscriptionStateAtLatest
			if res.Reason == resolve.ReasonUpgradeHeld {
				state = v1alpha1.SubscriptionStateUpgradeAvailable
			}
			changed = setState(st, state) || changed
		}
	case res.Status == resolve.StatusUpToDate:
		changed = RemoveCondition(st, v1alpha1.SubscriptionResolutionFailed, UpgradeHeld)
		if st.InstalledCSV != "" && st.InstalledCSV == st.CurrentCSV {
			changed = setState(st, v1alpha1.SubscriptionStateAtLatest) || changed
		}
	default: // Resolved
		changed = RemoveCondition(st, v1alpha1.SubscriptionResolutionFailed, UpgradeHeld)
		// OLM makes a new plan only when the resolution moves currentCSV: a Subscription
		// whose plan Failed under fail-forward (UpgradeFailed) gets a new one only once the
		// catalog offers something else than the CSV that plan was for.
		waiting := st.InstallPlanRef != nil && st.CurrentCSV == res.Next &&
			(st.State == v1alpha1.SubscriptionStateUpgradePending || st.State == v1alpha1.SubscriptionStateFailed)
		if !waiting {
			needsPlan = true
			changed = setState(st, v1alpha1.SubscriptionStateUpgradeAvailable) || changed
		}
	}
	changed = syncDeprecations(st, r.Deprecations, now) || changed
	return needsPlan, setChanged(sub, changed, now)
}

// PlanCreated points the Subscription at the InstallPlan made for its resolution, as OLM
// does after creating one: installPlanRef and installplan, the plan's generation,
// currentCSV, and UpgradePending. With plan nil the resolution needed no plan (the CSV it
// chose is already in the namespace, as when a Subscription adopts a CSV installed before
// it): currentCSV alone moves, and SyncInstalledCSV finishes on the next pass.
func PlanCreated(sub *v1alpha1.Subscription, plan *v1alpha1.InstallPlan, csv string, now metav1.Time) {
	st := &sub.Status
	st.CurrentCSV = csv
	st.LastUpdated = now
	if plan == nil {
		return
	}
	st.InstallPlanRef = &corev1.ObjectReference{
		APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.InstallPlanKind,
		Namespace: plan.Namespace, Name: plan.Name, UID: plan.UID, ResourceVersion: plan.ResourceVersion,
	}
	st.Install = &v1alpha1.InstallPlanReference{
		APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.InstallPlanKind,
		Name: plan.Name, UID: plan.UID,
	}
	st.InstallPlanGeneration = plan.Spec.Generation
	st.State = v1alpha1.SubscriptionStateUpgradePending
}

func setState(st *v1alpha1.SubscriptionStatus, s v1alpha1.SubscriptionState) bool {
	if st.State == s {
		return false
	}
	st.State = s
	return true
}

func setChanged(sub *v1alpha1.Subscription, changed bool, now metav1.Time) bool {
	if changed {
		sub.Status.LastUpdated = now
	}
	return changed
}

// syncDeprecations sets PackageDeprecated, ChannelDeprecated and BundleDeprecated from the
// catalog's entries, removes those no longer deprecated, and rolls the messages up into
// Deprecated (joined with "; "), as OLM's catalog health reconciler does.
func syncDeprecations(st *v1alpha1.SubscriptionStatus, deps []resolve.Deprecation, now metav1.Time) bool {
	changed := false
	var rollup []string
	for _, t := range []v1alpha1.SubscriptionConditionType{
		v1alpha1.SubscriptionPackageDeprecated, v1alpha1.SubscriptionChannelDeprecated, v1alpha1.SubscriptionBundleDeprecated,
	} {
		i := slices.IndexFunc(deps, func(d resolve.Deprecation) bool { return d.Condition == t })
		if i < 0 {
			changed = RemoveCondition(st, t) || changed
			continue
		}
		rollup = append(rollup, deps[i].Message)
		changed = SetCondition(st, v1alpha1.SubscriptionCondition{Type: t, Status: corev1.ConditionTrue, Message: deps[i].Message}, now) || changed
	}
	if len(rollup) == 0 {
		return RemoveCondition(st, v1alpha1.SubscriptionDeprecated) || changed
	}
	return SetCondition(st, v1alpha1.SubscriptionCondition{
		Type: v1alpha1.SubscriptionDeprecated, Status: corev1.ConditionTrue, Message: strings.Join(rollup, "; "),
	}, now) || changed
}

// ReusablePlan returns the InstallPlan a Subscription already owns that installs exactly the
// CSVs of the plan its resolution calls for and has not ended (not Complete, not Failed), if
// any. A pass that created a plan and stopped before writing the reference to it (a restart,
// a failed status write) must point the Subscription at that plan, not make a second one.
func ReusablePlan(sub *v1alpha1.Subscription, plans []v1alpha1.InstallPlan, csvNames []string) *v1alpha1.InstallPlan {
	want := slices.Sorted(slices.Values(csvNames))
	for i := range plans {
		ip := &plans[i]
		if ip.Status.Phase == v1alpha1.InstallPlanPhaseComplete || ip.Status.Phase == v1alpha1.InstallPlanPhaseFailed || !ip.DeletionTimestamp.IsZero() {
			continue
		}
		owned := slices.ContainsFunc(ip.OwnerReferences, func(o metav1.OwnerReference) bool {
			return o.Kind == v1alpha1.SubscriptionKind && o.UID == sub.UID
		})
		if owned && slices.Equal(slices.Sorted(slices.Values(ip.Spec.ClusterServiceVersionNames)), want) {
			return ip
		}
	}
	return nil
}
