package gitsync

import (
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/health"
	"github.com/olmsync/olmsync/reconcile/inventory"
)

// The app statuses join the build (gated objects), the apply (waiting, refused) and the
// health of what was applied.
func TestAppStatuses(t *testing.T) {
	b := Select(checked(t, twoClusters), syncOf("alpha", olmsyncv1alpha1.PolicyModeEnforce))
	applied := &apply.Result{}
	for _, o := range b.Objects() {
		r := apply.ObjectResult{Entry: inventory.EntryOf(o), Action: apply.Unchanged}
		if o.GetKind() == "ConfigMap" {
			r.Action, r.Reason, r.Message = apply.Failed, olmsyncv1alpha1.ApplyFailedReason, `ConfigMap "team-a/settings": forbidden`
		}
		applied.Objects = append(applied.Objects, r)
	}
	healthOf := func(o apply.ObjectResult) health.Result {
		if o.Entry.Kind == "Subscription" {
			return health.Result{Status: health.WaitingForApproval, Reason: "RequiresApproval", Message: "install-abc waits"}
		}
		return health.Result{Status: health.Healthy}
	}
	states := objectStates(b, applied, healthOf)
	got := appStatuses(b.Apps, states)
	want := []olmsyncv1alpha1.AppStatus{
		{Name: "cluster-scope", Path: "alpha/cluster-scope", Sync: olmsyncv1alpha1.SyncStatusSynced, Health: health.Healthy, Objects: 1},
		{Name: "team-a", Path: "alpha/team-a", Namespace: "team-a", Objects: 3,
			// Unknown: two of its objects are not in the cluster as Git has them, so nothing
			// can be told of them; that is worse than waiting for an approval.
			Sync: olmsyncv1alpha1.SyncStatusOutOfSync, Health: health.Unknown,
			Message: `ConfigMap "team-a/settings": ConfigMap "team-a/settings": forbidden`,
			Resources: []olmsyncv1alpha1.ResourceStatus{
				{ObjectReference: olmsyncv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "team-a", Name: "settings"},
					Sync: olmsyncv1alpha1.SyncStatusOutOfSync, Health: health.Unknown, Reason: olmsyncv1alpha1.ApplyFailedReason,
					Message: `ConfigMap "team-a/settings": forbidden`},
				{ObjectReference: olmsyncv1alpha1.ObjectReference{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Namespace: "team-a", Name: "og"},
					Sync: olmsyncv1alpha1.SyncStatusOutOfSync, Health: health.Unknown, Reason: olmsyncv1alpha1.PolicyViolationReason,
					Message: states[2].Message},
				{ObjectReference: olmsyncv1alpha1.ObjectReference{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Namespace: "team-a", Name: "etcd"},
					Sync: olmsyncv1alpha1.SyncStatusSynced, Health: health.WaitingForApproval, Reason: "RequiresApproval", Message: "install-abc waits"},
			}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(states[2].Message, "not applied: OP001 OperatorGroup") {
		t.Errorf("the gated object's message %q does not name the rule and the object", states[2].Message)
	}
}

func TestSummarize(t *testing.T) {
	progressing := objectState{Entry: inventory.Entry{Kind: "Subscription", Namespace: "a", Name: "etcd"}, Sync: olmsyncv1alpha1.SyncStatusSynced,
		Health: health.Result{Status: health.Progressing, Reason: "UpgradePending"}}
	approval := objectState{Entry: inventory.Entry{Kind: "Subscription", Namespace: "a", Name: "etcd"}, Sync: olmsyncv1alpha1.SyncStatusSynced,
		Health: health.Result{Status: health.WaitingForApproval, Reason: "RequiresApproval", Message: "install-x"}}
	waitingCRD := objectState{Entry: inventory.Entry{Kind: "Greeting", Namespace: "a", Name: "hi"}, Sync: olmsyncv1alpha1.SyncStatusOutOfSync,
		Reason: olmsyncv1alpha1.WaitingForCRDReason, Message: "waits for its CRD"}
	tests := []struct {
		name        string
		mode        olmsyncv1alpha1.PolicyMode
		conditions  []metav1.Condition
		change      *olmsyncv1alpha1.RevisionChange
		states      []objectState
		ready       metav1.ConditionStatus
		reason      string
		reconciling bool
		msg         string
		// exact: the message is msg and nothing more.
		exact bool
	}{
		{name: "in step", ready: metav1.ConditionTrue, reason: olmsyncv1alpha1.ReconciliationSucceededReason, msg: "Applied revision: main@sha1:abc"},
		{name: "a fetch failure comes first", conditions: []metav1.Condition{
			*conditions.TrueCondition(olmsyncv1alpha1.HealthCheckFailedCondition, olmsyncv1alpha1.HealthCheckFailedReason, "degraded"),
			*conditions.TrueCondition(olmsyncv1alpha1.FetchFailedCondition, olmsyncv1alpha1.GitUnreachableReason, "unreachable"),
		}, ready: metav1.ConditionFalse, reason: olmsyncv1alpha1.GitUnreachableReason, reconciling: true, msg: "unreachable"},
		{name: "policy violation in enforce mode", mode: olmsyncv1alpha1.PolicyModeEnforce, conditions: []metav1.Condition{
			*conditions.TrueCondition(olmsyncv1alpha1.PolicyViolationCondition, olmsyncv1alpha1.PolicyViolationReason, "OP001"),
		}, ready: metav1.ConditionFalse, reason: olmsyncv1alpha1.PolicyViolationReason, reconciling: true, msg: "OP001"},
		{name: "policy violation in audit mode is reported on a Ready Sync", mode: olmsyncv1alpha1.PolicyModeAudit, conditions: []metav1.Condition{
			*conditions.TrueCondition(olmsyncv1alpha1.PolicyViolationCondition, olmsyncv1alpha1.PolicyViolationReason, "OP001"),
		}, ready: metav1.ConditionTrue, reason: olmsyncv1alpha1.ReconciliationSucceededReason, msg: "Applied revision: main@sha1:abc; OP001"},
		{name: "progressing", states: []objectState{progressing}, ready: metav1.ConditionUnknown, reason: olmsyncv1alpha1.ProgressingReason,
			reconciling: true, msg: `applied revision main@sha1:abc; waiting for the apps to become healthy: Subscription "a/etcd": UpgradePending`},
		{name: "waiting for a CRD", states: []objectState{progressing, waitingCRD}, ready: metav1.ConditionUnknown, reason: olmsyncv1alpha1.WaitingForCRDReason,
			reconciling: true, msg: `waiting for the apps to become healthy: Greeting "a/hi": waits for its CRD; Subscription "a/etcd": UpgradePending`},
		{name: "waiting for approval is not progress", states: []objectState{approval}, ready: metav1.ConditionFalse,
			reason: olmsyncv1alpha1.WaitingForApprovalReason, msg: `waiting for a manual approval: Subscription "a/etcd": RequiresApproval: install-x`},
		{name: "a prune refused", conditions: []metav1.Condition{
			*conditions.TrueCondition(olmsyncv1alpha1.PruneFailedCondition, olmsyncv1alpha1.PruneRefusedReason, "would delete all 3 objects"),
		}, ready: metav1.ConditionFalse, reason: olmsyncv1alpha1.PruneRefusedReason, reconciling: true, msg: "would delete all 3 objects"},
		{name: "a branch that moved backwards is said", change: &olmsyncv1alpha1.RevisionChange{From: "main@sha1:def", To: "main@sha1:abc", Relation: olmsyncv1alpha1.RevisionBackward},
			ready: metav1.ConditionTrue, reason: olmsyncv1alpha1.ReconciliationSucceededReason,
			msg: "Applied revision: main@sha1:abc; non-fast-forward: main@sha1:abc is an ancestor of the revision applied before, main@sha1:def (the branch moved backwards)"},
		{name: "an unrelated history is said", change: &olmsyncv1alpha1.RevisionChange{From: "main@sha1:def", To: "main@sha1:abc", Relation: olmsyncv1alpha1.RevisionUnrelated},
			ready: metav1.ConditionTrue, reason: olmsyncv1alpha1.ReconciliationSucceededReason,
			msg: "Applied revision: main@sha1:abc; non-fast-forward: main@sha1:abc shares no history with the revision applied before, main@sha1:def"},
		{name: "a fast-forward is not", change: &olmsyncv1alpha1.RevisionChange{From: "main@sha1:def", To: "main@sha1:abc", Relation: olmsyncv1alpha1.RevisionFastForward},
			ready: metav1.ConditionTrue, reason: olmsyncv1alpha1.ReconciliationSucceededReason, exact: true, msg: "Applied revision: main@sha1:abc"},
		{name: "nor an earlier change", change: &olmsyncv1alpha1.RevisionChange{From: "main@sha1:def", To: "main@sha1:123", Relation: olmsyncv1alpha1.RevisionBackward},
			ready: metav1.ConditionTrue, reason: olmsyncv1alpha1.ReconciliationSucceededReason, exact: true, msg: "Applied revision: main@sha1:abc"},
		{name: "stalled", conditions: []metav1.Condition{
			*conditions.TrueCondition(olmsyncv1alpha1.StalledCondition, olmsyncv1alpha1.InvalidSpecReason, "bad ref"),
		}, ready: metav1.ConditionFalse, reason: olmsyncv1alpha1.InvalidSpecReason, msg: "bad ref"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := syncOf("", tt.mode)
			obj.Status.Conditions = tt.conditions
			obj.Status.LastRevisionChange = tt.change
			summarize(obj, summarizeHealth(tt.states), "main@sha1:abc")
			ready := conditions.Get(obj, olmsyncv1alpha1.ReadyCondition)
			if ready == nil || ready.Status != tt.ready || ready.Reason != tt.reason || !strings.Contains(ready.Message, tt.msg) || (tt.exact && ready.Message != tt.msg) {
				t.Errorf("Ready = %+v, want %s %s containing %q", ready, tt.ready, tt.reason, tt.msg)
			}
			if got := conditions.IsTrue(obj, olmsyncv1alpha1.ReconcilingCondition); got != tt.reconciling {
				t.Errorf("Reconciling = %v, want %v", got, tt.reconciling)
			}
		})
	}
}

func TestApplyDue(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	obj := &olmsyncv1alpha1.Sync{}
	obj.UID, obj.Generation = types.UID("u1"), 3
	obj.Spec.Interval = metav1.Duration{Duration: 10 * time.Minute}
	obj.Annotations = map[string]string{olmsyncv1alpha1.ReconcileRequestAnnotation: "r1"}
	fresh := func() *lastApply {
		return &lastApply{uid: "u1", generation: 3, requestedAt: "r1", revision: "main@sha1:a", at: now.Add(-time.Minute)}
	}
	tests := []struct {
		name     string
		last     func(*lastApply) *lastApply
		revision string
		want     bool
	}{
		{"nothing changed within the interval: health only", func(l *lastApply) *lastApply { return l }, "main@sha1:a", false},
		{"never applied (or olmsync restarted)", func(*lastApply) *lastApply { return nil }, "main@sha1:a", true},
		{"a new revision", func(l *lastApply) *lastApply { return l }, "main@sha1:b", true},
		{"a new generation", func(l *lastApply) *lastApply { l.generation = 2; return l }, "main@sha1:a", true},
		{"a requested reconcile", func(l *lastApply) *lastApply { l.requestedAt = "r0"; return l }, "main@sha1:a", true},
		{"the drift interval passed", func(l *lastApply) *lastApply { l.at = now.Add(-10 * time.Minute); return l }, "main@sha1:a", true},
		{"another Sync of the same name", func(l *lastApply) *lastApply { l.uid = "u0"; return l }, "main@sha1:a", true},
		{"something to retry", func(l *lastApply) *lastApply { l.retry = true; return l }, "main@sha1:a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := applyDue(obj, tt.last(fresh()), tt.revision, now); got != tt.want {
				t.Errorf("applyDue = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNeedsRetry(t *testing.T) {
	for action, want := range map[apply.Action]bool{
		apply.Created: false, apply.Configured: false, apply.Unchanged: false,
		apply.Waiting: true, apply.Failed: true, apply.Skipped: true,
	} {
		res := &apply.Result{Objects: []apply.ObjectResult{{Action: apply.Unchanged}, {Action: action}}}
		if got := needsRetry(res); got != want {
			t.Errorf("needsRetry with an object %s = %v, want %v", action, got, want)
		}
	}
}
