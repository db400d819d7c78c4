package gitsync

import (
	"time"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// SetAfterApply sets what runs right after an apply, before its outcome is written to the
// Sync's status: where a fault test crashes the manager.
func SetAfterApply(r *Reconciler, f func(obj *olmsyncv1alpha1.Sync, revision string)) {
	r.afterApply = f
}

// RetryIntervalOf is how long r waits after a failed reconcile of obj.
func RetryIntervalOf(r *Reconciler, obj *olmsyncv1alpha1.Sync) time.Duration {
	return r.retryInterval(obj)
}

// Unready is the dependency rule over a lookup.
var Unready = unready
