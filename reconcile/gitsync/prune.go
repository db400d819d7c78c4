package gitsync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/log"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/sources"
)

// recordPending writes, before the apply starts, an inventory holding every object about
// to be applied besides what the Sync applied before. A process killed in the middle of
// the apply then leaves no object labelled as the Sync's that its status does not list:
// the next reconcile prunes what the revision it finds no longer renders, and `olmsync
// diff sync` shows it. Entries of objects the apply never wrote are dropped by the
// inventory written after it (inventory.Next). A new revision is said (Reconciling) in
// the same write.
func (r *Reconciler) recordPending(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass, objs []*unstructured.Unstructured, newRevision bool) error {
	pending := inventory.New(p.previous.Entries()...)
	for _, e := range inventory.Of(objs).Entries() {
		if !pending.Has(e) {
			pending.Add(e)
		}
	}
	grows := pending.Len() > p.previous.Len()
	if !grows && !newRevision {
		return nil
	}
	if grows {
		obj.Status.Inventory = pending.ToStatus()
	}
	if newRevision {
		conditions.MarkReconciling(obj, olmsyncv1alpha1.ProgressingReason, "applying revision %s", p.tree.Revision)
	}
	if err := p.patcher.Patch(ctx, obj, ownedConditions); err != nil {
		return fmt.Errorf("patch status before the apply: %w", err)
	}
	return nil
}

// PruneGuard is the Sync's spec.pruneOptions as the inventory's guard, for the reconciler
// and `olmsync diff sync`.
func PruneGuard(obj *olmsyncv1alpha1.Sync) inventory.Guard {
	return inventory.Guard{AllowEmpty: obj.Spec.PruneOptions.AllowEmpty, MaxDeletions: obj.Spec.PruneOptions.MaxDeletions}
}

// prune deletes what the Sync applied before and no longer renders (step 4), and writes
// the next inventory. Nothing is deleted after a fetch that failed (the build is of the
// last good revision) or an apply that failed: those stale entries stay in the inventory
// for a later reconcile. A prune spec.pruneOptions does not allow (every object, or more
// than maxDeletions) deletes nothing and keeps the entries: PruneFailed with reason
// PruneRefused says so until a revision or the spec changes. With spec.prune off, stale
// entries are let go. Every prune with something to delete is logged, recorded in
// status.lastPrune and as an Event.
func (r *Reconciler) prune(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass) error {
	if !p.appliedNow {
		return nil // the inventory is what the last apply left
	}
	desired := p.build.Desired(p.fetchErr)
	next := inventory.Next(p.previous, desired, p.applied.Applied())
	defer func() { obj.Status.Inventory = next.ToStatus() }()
	stale, err := p.previous.Stale(desired, PruneGuard(obj))
	var (
		blocked *inventory.PruneBlockedError
		refused *inventory.PruneRefusedError
	)
	switch {
	case errors.As(err, &blocked):
		log.FromContext(ctx).Info(blocked.Error())
		return nil
	case errors.As(err, &refused) && obj.Spec.Prune && !conditions.IsTrue(obj, olmsyncv1alpha1.ApplyFailedCondition):
		for _, e := range stale {
			next.Add(e)
		}
		r.recordPrune(ctx, obj, pruneOutcome{revision: p.tree.Revision, stale: stale, refused: refused})
		conditions.MarkTrue(obj, olmsyncv1alpha1.PruneFailedCondition, olmsyncv1alpha1.PruneRefusedReason,
			"revision %s: %s; nothing was deleted", p.tree.Revision, refused.Error())
		p.failed = true
		return nil
	case err != nil && !errors.As(err, &refused):
		return err
	case !obj.Spec.Prune || len(stale) == 0:
		conditions.Delete(obj, olmsyncv1alpha1.PruneFailedCondition)
		return nil
	case conditions.IsTrue(obj, olmsyncv1alpha1.ApplyFailedCondition):
		for _, e := range stale {
			next.Add(e)
		}
		return nil
	}
	results, err := r.applier(obj, p.client).Prune(ctx, stale)
	handled := map[string]bool{}
	for _, res := range results {
		handled[res.Entry.ID()] = true
		if res.Action == apply.PruneFailed && res.With == nil {
			next.Add(res.Entry) // still ours: the next reconcile tries again
		}
	}
	for _, e := range stale {
		if !handled[e.ID()] {
			next.Add(e) // not reached (the context ended)
		}
	}
	out := pruneOutcome{revision: p.tree.Revision, stale: stale, results: results}
	r.recordPrune(ctx, obj, out)
	r.Metrics.RecordPruned(obj, out.count(apply.Deleted))
	var pruneErr *apply.PruneError
	switch {
	case errors.As(err, &pruneErr):
		conditions.MarkTrue(obj, olmsyncv1alpha1.PruneFailedCondition, olmsyncv1alpha1.PruneFailedReason, "%s", err)
		p.failed = true
		return nil
	case err != nil:
		return err
	}
	conditions.Delete(obj, olmsyncv1alpha1.PruneFailedCondition)
	return nil
}

// pruneOutcome is what one prune did, or why it did nothing.
type pruneOutcome struct {
	revision string
	stale    []inventory.Entry
	results  []apply.PruneResult
	refused  *inventory.PruneRefusedError
}

func (o pruneOutcome) count(a apply.PruneAction) int {
	n := 0
	for _, res := range o.results {
		if res.Action == a {
			n++
		}
	}
	return n
}

func (o pruneOutcome) entries(a apply.PruneAction) []string {
	var out []string
	for _, res := range o.results {
		if res.Action == a {
			out = append(out, res.Entry.String())
		}
	}
	return out
}

// summary is status.lastPrune.
func (o pruneOutcome) summary() *olmsyncv1alpha1.PruneSummary {
	s := &olmsyncv1alpha1.PruneSummary{Revision: o.revision, Stale: len(o.stale)}
	if o.refused != nil {
		s.Refused, s.Message = len(o.stale), o.refused.Error()
		return s
	}
	s.Deleted, s.Gone = o.count(apply.Deleted), o.count(apply.Gone)
	s.Kept, s.Failed = o.count(apply.Kept), o.count(apply.PruneFailed)
	var failed []string
	for _, res := range o.results {
		if res.Action == apply.PruneFailed {
			failed = append(failed, res.Message)
		}
	}
	if len(failed) > 0 {
		s.Message = fmt.Sprintf("%d object(s) could not be deleted: %s", len(failed), firstOf(failed, 3))
	}
	return s
}

// recordPrune says what a prune did in the log (every object), status.lastPrune (the
// counts) and an Event (the counts and the first objects): Normal when it deleted what
// it meant to, Warning when it was refused or a deletion failed.
func (r *Reconciler) recordPrune(ctx context.Context, obj *olmsyncv1alpha1.Sync, o pruneOutcome) {
	s := o.summary()
	obj.Status.LastPrune = s
	logger := log.FromContext(ctx).WithValues("revision", o.revision)
	if o.refused != nil {
		names := make([]string, 0, len(o.stale))
		for _, e := range o.stale {
			names = append(names, e.String())
		}
		logger.Info("prune refused", "reason", o.refused.Error(), "objects", names)
		r.eventf(obj, corev1.EventTypeWarning, olmsyncv1alpha1.PruneRefusedReason, "Prune",
			"revision %s: %s; nothing was deleted, %d object(s) kept: %s", o.revision, o.refused.Error(), len(names), firstOf(names, 5))
		return
	}
	logger.Info("pruned", "deleted", o.entries(apply.Deleted), "gone", o.entries(apply.Gone),
		"kept", o.entries(apply.Kept), "failed", o.entries(apply.PruneFailed))
	msg := fmt.Sprintf("revision %s: %d deleted, %d already gone, %d kept, %d failed", o.revision, s.Deleted, s.Gone, s.Kept, s.Failed)
	if deleted := o.entries(apply.Deleted); len(deleted) > 0 {
		msg += "; deleted " + firstOf(deleted, 5)
	}
	if s.Failed > 0 {
		r.eventf(obj, corev1.EventTypeWarning, olmsyncv1alpha1.PruneFailedReason, "Prune", "%s; %s", msg, s.Message)
		return
	}
	r.eventf(obj, corev1.EventTypeNormal, olmsyncv1alpha1.PrunedReason, "Prune", "%s", msg)
}

// revisionChanged says, in status.lastRevisionChange, the log and (when the branch did
// not move forwards) a Warning Event, how the revision about to become the applied one
// relates to the one applied before it: as the fetch told, which reads only the cache.
func (r *Reconciler) revisionChanged(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass) {
	from, to := obj.Status.LastAppliedRevision, p.tree.Revision
	if from == "" {
		return
	}
	rel, err := p.fetched.relation, p.fetched.relationErr
	if p.fetched.from != from || p.fetched.tree == nil || p.fetched.tree.Revision != to {
		rel, err = sources.CompareRevisions(ctx, p.req, from, to) // not told by the fetch
	}
	if err != nil {
		log.FromContext(ctx).Info("cannot relate the revisions", "from", from, "to", to, "error", err.Error())
	}
	relation := relationOf(rel)
	obj.Status.LastRevisionChange = &olmsyncv1alpha1.RevisionChange{From: from, To: to, Relation: relation}
	log.FromContext(ctx).Info("revision changed", "from", from, "to", to, "relation", string(relation))
	if relation == olmsyncv1alpha1.RevisionBackward || relation == olmsyncv1alpha1.RevisionUnrelated {
		r.eventf(obj, corev1.EventTypeWarning, olmsyncv1alpha1.NonFastForwardReason, "Apply", "%s", nonFastForward(obj.Status.LastRevisionChange))
	}
}

func relationOf(rel sources.Relation) olmsyncv1alpha1.RevisionRelation {
	switch rel {
	case sources.FastForward, sources.Same:
		return olmsyncv1alpha1.RevisionFastForward
	case sources.Backward:
		return olmsyncv1alpha1.RevisionBackward
	case sources.Unrelated:
		return olmsyncv1alpha1.RevisionUnrelated
	}
	return olmsyncv1alpha1.RevisionUnknown
}

// nonFastForward says how the revision moved when it did not move forwards; "" when it did
// (or when that cannot be told).
func nonFastForward(c *olmsyncv1alpha1.RevisionChange) string {
	switch {
	case c == nil:
		return ""
	case c.Relation == olmsyncv1alpha1.RevisionBackward:
		return fmt.Sprintf("non-fast-forward: %s is an ancestor of the revision applied before, %s (the branch moved backwards)", c.To, c.From)
	case c.Relation == olmsyncv1alpha1.RevisionUnrelated:
		return fmt.Sprintf("non-fast-forward: %s shares no history with the revision applied before, %s", c.To, c.From)
	}
	return ""
}

// logApply logs what an apply changed, object by object; an apply that changed nothing
// is logged at debug level only.
func logApply(ctx context.Context, revision string, res *apply.Result) {
	names := func(a apply.Action) []string {
		var out []string
		for _, o := range res.With(a) {
			out = append(out, o.Entry.String())
		}
		return out
	}
	created, configured, failed := names(apply.Created), names(apply.Configured), names(apply.Failed)
	logger := log.FromContext(ctx).WithValues("revision", revision, "unchanged", len(res.With(apply.Unchanged)))
	if len(created)+len(configured)+len(failed) == 0 {
		logger.V(1).Info("applied, nothing changed")
		return
	}
	logger.Info("applied", "created", created, "configured", configured, "failed", failed,
		"waiting", names(apply.Waiting), "skipped", names(apply.Skipped))
}

// firstOf joins the first n strings, and says how many more there are.
func firstOf(s []string, n int) string {
	out := strings.Join(s[:min(n, len(s))], ", ")
	if len(s) > n {
		out += fmt.Sprintf(" and %d more", len(s)-n)
	}
	return out
}

func (r *Reconciler) eventf(obj *olmsyncv1alpha1.Sync, eventType, reason, action, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, eventType, reason, action, format, args...)
	}
}
