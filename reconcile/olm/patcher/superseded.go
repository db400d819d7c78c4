package patcher

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// Superseded remembers, for each object a controller wrote, what its last write made of
// it. A reconcile that reads an older version from the cache reads a copy the controller's
// own write made stale — the version the write replaced, or one its writes went through
// (a reconcile writes the metadata, then the status): the write from it would be refused
// (IsStale), after a whole sync computed it, and the event of the newer version reconciles
// the object again anyway. Such a reconcile can stop at once. Versions are compared as the
// API server orders them (resourceversion.CompareResourceVersion, as written.Objects
// does); versions that do not compare are stale only when they are the one the write
// replaced. Safe for concurrent use.
type Superseded struct {
	mu sync.Mutex
	rv map[types.NamespacedName]write
}

// write is what one write did to an object: the version it replaced, and the one it made.
type write struct{ before, after string }

// Wrote records that a write replaced version before of key with version after; nothing when
// they are the same (nothing was written).
func (s *Superseded) Wrote(key types.NamespacedName, before, after string) {
	if before == after || before == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rv == nil {
		s.rv = map[types.NamespacedName]write{}
	}
	s.rv[key] = write{before: before, after: after}
}

// Stale reports whether rv is a version of key older than what the controller's last write
// made.
func (s *Superseded) Stale(key types.NamespacedName, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.rv[key]
	if !ok || rv == "" {
		return false
	}
	if cmp, err := resourceversion.CompareResourceVersion(rv, w.after); err == nil {
		return cmp < 0
	}
	return rv == w.before
}

// Forget drops what is remembered of key (the object is gone).
func (s *Superseded) Forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rv, key)
}
