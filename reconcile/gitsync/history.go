package gitsync

import (
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/sources"
)

// reconcileRun is what one reconcile adds to status.history.
type reconcileRun struct {
	revision string
	started  time.Time
	took     time.Duration
	// result is Ready's reason at the end; applied says the revision's objects were
	// applied; changed says Ready's reason differs from the one before the reconcile.
	result           string
	applied, changed bool
}

// addToHistory is status.history after a reconcile: a reconcile that neither applied nor
// ended otherwise than the one before (a health look, a retry failing the same way) adds
// nothing, so that a Sync in step writes no status between its applies. A reconcile of
// the same revision with the same result as the newest entry is counted in it, as Flux
// counts a run of reconciles in one snapshot; any other starts a new entry, and the
// oldest go beyond MaxHistory.
func addToHistory(history []olmsyncv1alpha1.ReconcileSnapshot, run reconcileRun) []olmsyncv1alpha1.ReconcileSnapshot {
	if !run.applied && !run.changed {
		return history
	}
	at := metav1.NewTime(run.started.UTC().Truncate(time.Second))
	took := metav1.Duration{Duration: run.took.Round(time.Millisecond)}
	if len(history) > 0 && history[0].Revision == run.revision && history[0].LastReconciledStatus == run.result {
		out := append([]olmsyncv1alpha1.ReconcileSnapshot(nil), history...)
		out[0].LastReconciled, out[0].LastReconciledDuration = at, took
		out[0].Applied = run.applied
		out[0].TotalReconciles++
		return out
	}
	out := make([]olmsyncv1alpha1.ReconcileSnapshot, 0, min(len(history)+1, olmsyncv1alpha1.MaxHistory))
	out = append(out, olmsyncv1alpha1.ReconcileSnapshot{
		Revision: run.revision, FirstReconciled: at, LastReconciled: at, LastReconciledDuration: took,
		LastReconciledStatus: run.result, Applied: run.applied, TotalReconciles: 1,
	})
	return append(out, history[:min(len(history), olmsyncv1alpha1.MaxHistory-1)]...)
}

// recordHistory adds this reconcile to obj's status.history; p is nil when the
// reconcile ended before its pipeline ran (suspended).
func (r *Reconciler) recordHistory(obj *olmsyncv1alpha1.Sync, p *pass, start time.Time, readyBefore *metav1.Condition) {
	ready := conditions.Get(obj, olmsyncv1alpha1.ReadyCondition)
	if ready == nil {
		return
	}
	run := reconcileRun{revision: obj.Status.LastAppliedRevision, started: start, took: r.clock().Sub(start), result: ready.Reason,
		changed: readyBefore == nil || readyBefore.Reason != ready.Reason}
	if p != nil {
		run.applied = p.appliedNow
		if p.tree != nil {
			run.revision = p.tree.Revision
		}
	}
	if run.revision == "" {
		return // nothing was ever fetched: no revision to tell of
	}
	obj.Status.History = addToHistory(obj.Status.History, run)
}

// commitMetadata is status.lastAppliedCommit for a tree's commit; nil outside git.
func commitMetadata(m sources.CommitMeta) *olmsyncv1alpha1.CommitMetadata {
	if m == (sources.CommitMeta{}) {
		return nil
	}
	out := &olmsyncv1alpha1.CommitMetadata{Subject: m.Subject, Author: m.Author}
	if !m.When.IsZero() {
		t := metav1.NewTime(m.When.UTC())
		out.Time = &t
	}
	return out
}
