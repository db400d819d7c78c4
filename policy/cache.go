package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
)

// FindingsCache keeps the findings of one cluster by the digest of the rules and of the
// cluster's whole policy input, so that a second evaluation of the same input with the
// same rules (a pull request's base and head: most clusters are the same in both) is not
// run again. Errors are never kept. Safe for concurrent use; make one with
// NewFindingsCache.
type FindingsCache struct {
	mu      sync.Mutex
	entries map[string][]Violation
	// Hits and Misses count lookups, for tests and benchmarks.
	Hits, Misses atomic.Int64
}

// NewFindingsCache returns an empty cache.
func NewFindingsCache() *FindingsCache {
	return &FindingsCache{entries: map[string][]Violation{}}
}

func (c *FindingsCache) get(key string) ([]Violation, bool) {
	if c == nil || key == "" {
		return nil, false
	}
	c.mu.Lock()
	v, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		c.Misses.Add(1)
		return nil, false
	}
	c.Hits.Add(1)
	return slices.Clone(v), true
}

func (c *FindingsCache) put(key string, v []Violation) {
	if c == nil || key == "" {
		return
	}
	c.mu.Lock()
	c.entries[key] = slices.Clone(v)
	c.mu.Unlock()
}

// findingsKey is the digest of the engine's rules and a completed input (its JSON form);
// "" when there is no cache or the input cannot be encoded.
func (e *Engine) findingsKey(in *Input) string {
	if e.cache == nil {
		return ""
	}
	// Encoded into the hash as it goes: an input's JSON is megabytes on a large repository,
	// and the key needs none of it kept.
	h := sha256.New()
	h.Write([]byte(e.fingerprint + "\x00"))
	if err := json.NewEncoder(h).Encode(in); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
