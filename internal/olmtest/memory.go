package olmtest

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// MemoryPeak follows the Go heap of the process while a manager runs, so that a benchmark
// can report the manager's memory apart from what the process held before it started (the
// in-process registry with its pushed images, the benchmark's fixtures). RSS cannot tell
// the two apart; the runtime's own accounting can, as a difference.
//
// Heap is the peak of the bytes the heap's objects occupy (live ones and dead ones not yet
// swept: what the process must hold, the part of RSS the program decides) above the same
// figure right after a collection before the manager started. Live is the peak of the
// bytes the last collection found live, above the live bytes then: the manager's working
// set, whatever GOGC lets the garbage grow to.
//
// Both include what the process does besides the manager while it runs (the registry
// answering pulls, the benchmark polling the API server); a benchmark names that.
type MemoryPeak struct {
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	baseHeap uint64
	baseLive uint64
	peakHeap uint64
	peakLive uint64
}

const (
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	metricHeapLive    = "/gc/heap/live:bytes"
)

// SampleMemory collects garbage, takes the baseline, and samples the heap every 20 ms
// until Stop.
func SampleMemory() *MemoryPeak {
	runtime.GC()
	p := &MemoryPeak{stop: make(chan struct{}), done: make(chan struct{})}
	p.baseHeap, p.baseLive = readHeap()
	p.peakHeap, p.peakLive = p.baseHeap, p.baseLive
	go func() {
		defer close(p.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.sample()
			}
		}
	}()
	return p
}

func (p *MemoryPeak) sample() {
	heap, live := readHeap()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peakHeap, p.peakLive = max(p.peakHeap, heap), max(p.peakLive, live)
}

// Stop ends the sampling and returns the peaks above the baseline, in bytes.
func (p *MemoryPeak) Stop() (heap, live uint64) {
	p.sample()
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakHeap - p.baseHeap, p.peakLive - p.baseLive
}

func readHeap() (heap, live uint64) {
	s := []metrics.Sample{{Name: metricHeapObjects}, {Name: metricHeapLive}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}
