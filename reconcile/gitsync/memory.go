package gitsync

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/inventory"
)

// lastApply is what the reconciler remembers of a Sync's last apply. A reconcile with no
// new revision, no new generation and no request, before the drift-correction interval
// has passed, reuses it and only looks at health: the fetch still runs (a new commit is
// seen within spec.source.interval), but nothing is rendered or dry-run applied again.
// It lives in memory only; a restarted olmsync applies once before it trusts it again.
type lastApply struct {
	uid         types.UID
	generation  int64
	requestedAt string
	revision    string
	at          time.Time
	build       *Build
	applied     *apply.Result
	// retry: the apply left something to do again (an object refused, skipped, or waiting
	// for its CRD), a health check found an applied object gone, or a later reconcile
	// ended before it could apply.
	retry bool
}

// applyDue reports whether a reconcile at now must render and apply rather than reuse the
// last apply: there is none (or it was of another Sync of the same name), the spec or the
// revision changed, a reconcile was requested, the drift-correction interval passed, or
// the last apply left something to retry.
func applyDue(obj *olmsyncv1alpha1.Sync, last *lastApply, revision string, now time.Time) bool {
	return last == nil || last.uid != obj.UID || last.generation != obj.Generation ||
		last.requestedAt != requestedAt(obj) || last.revision != revision ||
		now.Sub(last.at) >= obj.Spec.Interval.Duration || last.retry
}

// needsRetry reports whether an apply left objects to try again.
func needsRetry(res *apply.Result) bool {
	for _, o := range res.Objects {
		if o.Action == apply.Waiting || o.Action == apply.Failed || o.Action == apply.Skipped {
			return true
		}
	}
	return false
}

// memory holds the last apply of each Sync the reconciler handles.
type memory struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*lastApply
}

func (m *memory) get(k types.NamespacedName) *lastApply {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[k]
}

func (m *memory) set(k types.NamespacedName, l *lastApply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[types.NamespacedName]*lastApply{}
	}
	m.m[k] = l
}

func (m *memory) forget(k types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, k)
}

// AppsOf maps the inventory ID of each object the last apply of a Sync rendered to its
// app, for the dashboard's tree (status.inventory does not say which app an object is
// of). It is nil when this process has not applied the Sync since it started: another
// replica leads, or the first reconcile is still to come.
func (r *Reconciler) AppsOf(k types.NamespacedName) map[string]string {
	last := r.memory.get(k)
	if last == nil || last.build == nil {
		return nil
	}
	out := map[string]string{}
	for _, a := range last.build.Apps {
		for _, o := range a.Objects {
			out[inventory.EntryOfRendered(o).ID()] = a.Name
		}
	}
	return out
}
