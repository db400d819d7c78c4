package gitsync

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

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

// RemoteClientKept reports whether a client of the other cluster is kept for the Sync
// with uid.
func RemoteClientKept(uid types.UID) bool {
	remotes.mu.Lock()
	defer remotes.mu.Unlock()
	for k := range remotes.clients {
		if strings.HasPrefix(k, string(uid)+"/") {
			return true
		}
	}
	return false
}
