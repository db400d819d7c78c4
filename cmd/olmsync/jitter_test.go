//go:build !olmsync_light

package main

import (
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/jitter"
)

// TestJitterFromManyWorkers: the Sync controller's workers jitter their requeue intervals at
// once, through flux's one global random source. Run with -race (CI does): with the source
// flux makes when given none, the race detector reports the draws.
func TestJitterFromManyWorkers(t *testing.T) {
	jitter.SetGlobalIntervalJitter(0.1, jitterRand())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if d := jitter.JitteredIntervalDuration(time.Minute); d < 54*time.Second || d > 66*time.Second {
					t.Errorf("jittered interval %s, want within 10%% of a minute", d)
					return
				}
			}
		})
	}
	wg.Wait()
}
