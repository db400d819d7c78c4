package main

import (
	"math/rand"
	"sync"
	"time"
)

// jitterRand is the random source of the Syncs' requeue jitter (--interval-jitter-percentage).
// flux's jitter package draws from one *rand.Rand for every call, and the Sync controller's
// workers call it at once; given none, it makes a rand.Rand whose source is not safe for
// concurrent use (a data race under -race, and a source whose state concurrent draws can
// corrupt). This one's source takes a lock.
func jitterRand() *rand.Rand {
	return rand.New(&lockedSource{src: rand.NewSource(time.Now().UnixNano()).(rand.Source64)})
}

// lockedSource is a rand.Source64 safe for concurrent use.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source64
}

func (s *lockedSource) Int63() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Int63()
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}

func (s *lockedSource) Seed(seed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.src.Seed(seed)
}
