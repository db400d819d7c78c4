package memguard

import (
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Threshold is the share of the limit at which the watch calls back: below the limit
// itself, so that the work can be stopped while the process still has room to report it.
const Threshold = 0.9

// Interval is how often the heap is read. Reading two runtime metrics does not stop the
// world; at this rate an allocation runs at most a few MB past the threshold unseen.
const Interval = 5 * time.Millisecond

// ExceededError is the heap passing the threshold of the limit.
type ExceededError struct {
	// Limit is the ceiling in bytes; Heap the heap's size when it was seen over the
	// threshold.
	Limit, Heap uint64
}

func (e *ExceededError) Error() string {
	return fmt.Sprintf("the heap reached %s, over %.0f%% of the memory limit of %s", Bytes(e.Heap), Threshold*100, Bytes(e.Limit))
}

// Watch sets the runtime's soft memory limit to limit and, until stop is called, reads the
// heap every Interval. The first time the live heap (as of the last collection) passes
// Threshold of limit, or the heap's objects, garbage included, pass limit itself (the
// collector is no longer keeping up), exceeded is called, once, from the watching
// goroutine. stop restores the runtime's previous limit. A limit of 0 watches nothing.
func Watch(limit uint64, exceeded func(*ExceededError)) (stop func()) {
	if limit == 0 {
		return func() {}
	}
	previous := debug.SetMemoryLimit(int64(min(limit, math.MaxInt64)))
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		samples := []metrics.Sample{{Name: liveHeap}, {Name: heapObjects}}
		tick := time.NewTicker(Interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(samples)
			live, objects := value(samples[0]), value(samples[1])
			if float64(live) > Threshold*float64(limit) || objects > limit {
				exceeded(&ExceededError{Limit: limit, Heap: max(live, objects)})
				return
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			debug.SetMemoryLimit(previous)
		})
	}
}

const (
	liveHeap    = "/gc/heap/live:bytes"
	heapObjects = "/memory/classes/heap/objects:bytes"
)

func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}

// HeapObjects is the heap's size now, garbage included.
func HeapObjects() uint64 {
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	return value(s[0])
}

// Bytes writes a size in binary units, as the flags take them ("512Mi", "2Gi").
func Bytes(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGi", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGi", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%dMi", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
