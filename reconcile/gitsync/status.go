package gitsync

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"
	"k8s.io/apimachinery/pkg/runtime/schema"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/health"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/render"
)

// objectState is what a reconcile knows of one object of an app: whether it is in the
// cluster as Git has it, and its health there.
type objectState struct {
	App   string
	Entry inventory.Entry
	Sync  olmsyncv1alpha1.SyncStatusCode
	// Reason and Message say why the object is not Synced (PolicyViolation,
	// WaitingForCRD, ApplyFailed); empty when it is.
	Reason, Message string
	Health          health.Result
}

// synced reports whether the object is in the cluster as Git has it, so its health can be
// read there.
func (s objectState) synced() bool { return s.Sync == olmsyncv1alpha1.SyncStatusSynced }

// objectStates joins what the build and the apply said of each object of the apps: gated
// objects are OutOfSync (PolicyViolation), objects waiting for their CRD OutOfSync and
// Progressing, refused or skipped ones OutOfSync and Unknown, the others Synced with the
// health health() gives their live object. applied may be nil when nothing was applied.
func objectStates(b *Build, applied *apply.Result, healthOf func(apply.ObjectResult) health.Result) []objectState {
	byID := map[string]apply.ObjectResult{}
	if applied != nil {
		for _, o := range applied.Objects {
			byID[o.Entry.ID()] = o
		}
	}
	var out []objectState
	for _, a := range b.Apps {
		for _, o := range a.Objects {
			s := objectState{App: a.Name, Entry: inventory.EntryOfRendered(o), Sync: olmsyncv1alpha1.SyncStatusOutOfSync}
			if gated := b.Gated(o); gated != nil {
				s.Reason = olmsyncv1alpha1.PolicyViolationReason
				s.Message = "not applied: " + describeViolation(gated[0])
				s.Health = health.Result{Status: health.Unknown, Reason: s.Reason, Message: s.Message}
				out = append(out, s)
				continue
			}
			r, ok := byID[s.Entry.ID()]
			switch {
			case !ok:
				s.Reason, s.Message = "NotApplied", "not applied"
				s.Health = health.Result{Status: health.Unknown}
			case r.Action == apply.Waiting:
				s.Reason, s.Message = r.Reason, r.Message
				s.Health = health.Result{Status: health.Progressing, Reason: r.Reason, Message: r.Message}
			case r.Action == apply.Failed || r.Action == apply.Skipped:
				s.Reason, s.Message = cmpOr(r.Reason, olmsyncv1alpha1.ApplyFailedReason), r.Message
				s.Health = health.Result{Status: health.Unknown, Reason: s.Reason, Message: r.Message}
			default:
				s.Sync = olmsyncv1alpha1.SyncStatusSynced
				s.Health = healthOf(r)
			}
			out = append(out, s)
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// appStatuses is status.apps: per app its sync status and health (the worst of its
// objects'), and the objects that are not Synced and Healthy.
func appStatuses(apps []*render.AppResult, states []objectState) []olmsyncv1alpha1.AppStatus {
	byApp := map[string][]objectState{}
	for _, s := range states {
		byApp[s.App] = append(byApp[s.App], s)
	}
	out := make([]olmsyncv1alpha1.AppStatus, 0, len(apps))
	for _, a := range apps {
		st := olmsyncv1alpha1.AppStatus{Name: a.Name, Path: a.Path, Namespace: a.Namespace, Objects: len(a.Objects)}
		if a.Err != nil {
			st.Sync, st.Health, st.Message = olmsyncv1alpha1.SyncStatusUnknown, health.Unknown, a.Err.Error()
			out = append(out, st)
			continue
		}
		st.Sync = olmsyncv1alpha1.SyncStatusSynced
		results := make([]health.Result, 0, len(byApp[a.Name]))
		var firstOutOfSync *objectState
		for i, s := range byApp[a.Name] {
			results = append(results, s.Health)
			if !s.synced() && firstOutOfSync == nil {
				st.Sync, firstOutOfSync = olmsyncv1alpha1.SyncStatusOutOfSync, &byApp[a.Name][i]
			}
			if (!s.synced() || s.Health.Status != health.Healthy) && len(st.Resources) < olmsyncv1alpha1.MaxAppResources {
				st.Resources = append(st.Resources, resourceStatus(s))
			}
		}
		worst := health.Worst(results...)
		st.Health = worst.Status
		switch {
		case firstOutOfSync != nil:
			st.Message = fmt.Sprintf("%s: %s", firstOutOfSync.Entry, firstOutOfSync.Message)
		case worst.Status != health.Healthy:
			st.Message = worstMessage(byApp[a.Name], worst)
		}
		out = append(out, st)
	}
	return out
}

// worstMessage names the first object with the app's worst health, and why.
func worstMessage(states []objectState, worst health.Result) string {
	for _, s := range states {
		if s.Health.Status == worst.Status {
			return fmt.Sprintf("%s is %s: %s", s.Entry, s.Health.Status, reasonAndMessage(s.Health))
		}
	}
	return string(worst.Status)
}

func reasonAndMessage(r health.Result) string {
	switch {
	case r.Reason != "" && r.Message != "":
		return r.Reason + ": " + r.Message
	case r.Reason != "":
		return r.Reason
	}
	return r.Message
}

func resourceStatus(s objectState) olmsyncv1alpha1.ResourceStatus {
	gvk := schema.GroupVersionKind{Group: s.Entry.Group, Version: s.Entry.Version, Kind: s.Entry.Kind}
	rs := olmsyncv1alpha1.ResourceStatus{
		ObjectReference: olmsyncv1alpha1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: s.Entry.Kind,
			Namespace: s.Entry.Namespace, Name: s.Entry.Name},
		Sync: s.Sync, Health: s.Health.Status, Reason: s.Reason, Message: s.Message,
	}
	if s.synced() {
		rs.Reason, rs.Message = s.Health.Reason, s.Health.Message
	}
	return rs
}

// healthSummary is what the apps' health says about the Sync as a whole.
type healthSummary struct {
	// failed are the applied objects that are Degraded or Missing.
	failed []objectState
	// approval are the objects waiting for a Manual approval.
	approval []objectState
	// progressing are the objects on their way: Progressing, or Unknown while they settle.
	progressing []objectState
	// waitingForCRD are custom resources whose CRD is not served yet.
	waitingForCRD []objectState
}

func summarizeHealth(states []objectState) healthSummary {
	var h healthSummary
	for _, s := range states {
		switch {
		case s.Reason == olmsyncv1alpha1.WaitingForCRDReason:
			h.waitingForCRD = append(h.waitingForCRD, s)
		case !s.synced():
			// Gated or refused: the policy and apply conditions say why.
		case s.Health.Status == health.Degraded || s.Health.Status == health.Missing:
			h.failed = append(h.failed, s)
		case s.Health.Status == health.WaitingForApproval:
			h.approval = append(h.approval, s)
		case s.Health.Status == health.Progressing || s.Health.Status == health.Unknown:
			h.progressing = append(h.progressing, s)
		}
	}
	return h
}

// settling reports whether the Sync should look again soon: an object is on its way.
func (h healthSummary) settling() bool {
	return len(h.progressing) > 0 || len(h.waitingForCRD) > 0 || len(h.approval) > 0
}

// describe names the first objects of a list and what they are waiting for.
func describe(states []objectState) string {
	parts := make([]string, 0, 3)
	for _, s := range states[:min(3, len(states))] {
		msg := reasonAndMessage(s.Health)
		if !s.synced() {
			msg = s.Message
		}
		parts = append(parts, fmt.Sprintf("%s: %s", s.Entry, msg))
	}
	if len(states) > 3 {
		parts = append(parts, fmt.Sprintf("and %d more", len(states)-3))
	}
	return strings.Join(parts, "; ")
}

// failureConditions are the negative-polarity conditions in the order Ready reports them:
// the first present one is why the Sync is not Ready.
var failureConditions = []string{
	olmsyncv1alpha1.DependencyNotReadyCondition,
	olmsyncv1alpha1.FetchFailedCondition,
	olmsyncv1alpha1.BuildFailedCondition,
	olmsyncv1alpha1.ApplyFailedCondition,
	olmsyncv1alpha1.PolicyViolationCondition,
	olmsyncv1alpha1.PruneFailedCondition,
	olmsyncv1alpha1.HealthCheckFailedCondition,
}

// summarize sets Ready, Reconciling and Stalled from what the steps left on the Sync: a
// stalled spec; else the first failure condition (PolicyViolation only in enforce mode);
// else objects waiting for a person's approval; else objects still on their way; else
// success. It is the only place Ready is decided.
func summarize(obj *olmsyncv1alpha1.Sync, h healthSummary, revision string) {
	if conditions.IsTrue(obj, olmsyncv1alpha1.StalledCondition) {
		c := conditions.Get(obj, olmsyncv1alpha1.StalledCondition)
		conditions.MarkFalse(obj, olmsyncv1alpha1.ReadyCondition, c.Reason, "%s", c.Message)
		conditions.Delete(obj, olmsyncv1alpha1.ReconcilingCondition)
		return
	}
	for _, t := range failureConditions {
		if !conditions.IsTrue(obj, t) || (t == olmsyncv1alpha1.PolicyViolationCondition && obj.PolicyMode() == olmsyncv1alpha1.PolicyModeAudit) {
			continue
		}
		c := conditions.Get(obj, t)
		conditions.MarkFalse(obj, olmsyncv1alpha1.ReadyCondition, c.Reason, "%s", c.Message)
		conditions.MarkReconciling(obj, olmsyncv1alpha1.ProgressingWithRetryReason, "%s", c.Message)
		return
	}
	applied := "applied revision " + revision
	switch {
	case len(h.approval) > 0:
		// Not a failure and not progress: nothing happens until a person approves. Ready is
		// False so that `olmsync reconcile sync --wait` says so instead of waiting forever.
		conditions.MarkFalse(obj, olmsyncv1alpha1.ReadyCondition, olmsyncv1alpha1.WaitingForApprovalReason,
			"%s; waiting for a manual approval: %s", applied, describe(h.approval))
		conditions.Delete(obj, olmsyncv1alpha1.ReconcilingCondition)
	case len(h.waitingForCRD) > 0 || len(h.progressing) > 0:
		reason := olmsyncv1alpha1.ProgressingReason
		waiting := h.progressing
		if len(h.waitingForCRD) > 0 {
			reason, waiting = olmsyncv1alpha1.WaitingForCRDReason, append(slices.Clone(h.waitingForCRD), h.progressing...)
		}
		msg := fmt.Sprintf("%s; waiting for the apps to become healthy: %s", applied, describe(waiting))
		conditions.MarkUnknown(obj, olmsyncv1alpha1.ReadyCondition, reason, "%s", msg)
		conditions.MarkReconciling(obj, reason, "%s", msg)
	default:
		msg := "Applied revision: " + revision
		if c := obj.Status.LastRevisionChange; c != nil && c.To == revision && nonFastForward(c) != "" {
			msg += "; " + nonFastForward(c)
		}
		if conditions.IsTrue(obj, olmsyncv1alpha1.PolicyViolationCondition) {
			msg += "; " + conditions.GetMessage(obj, olmsyncv1alpha1.PolicyViolationCondition)
		}
		conditions.MarkTrue(obj, olmsyncv1alpha1.ReadyCondition, olmsyncv1alpha1.ReconciliationSucceededReason, "%s", msg)
		conditions.Delete(obj, olmsyncv1alpha1.ReconcilingCondition)
	}
}
