package patcher

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Superseded remembers, for each object a controller wrote, the resourceVersion its last
// write replaced. A reconcile that reads that version from the cache reads a copy the
// controller's own write made stale: the write from it would be refused (IsStale), after a
// whole sync computed it, and the event of the newer version reconciles the object again
// anyway. Such a reconcile can stop at once. Safe for concurrent use.
type Superseded struct {
	mu sync.Mutex
	rv map[types.NamespacedName]string
}

// Wrote records that a write replaced version before of key with version after; nothing when
// they are the same (nothing was written).
func (s *Superseded) Wrote(key types.NamespacedName, before, after string) {
	if before == after || before == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rv == nil {
		s.rv = map[types.NamespacedName]string{}
	}
	s.rv[key] = before
}

// Stale reports whether rv is the version of key that the controller's last write replaced.
func (s *Superseded) Stale(key types.NamespacedName, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return rv != "" && s.rv[key] == rv
}

// Forget drops what is remembered of key (the object is gone).
func (s *Superseded) Forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rv, key)
}
