//go:build !olmsync_light

package main

import (
	"testing"
	"time"
)

// TestUnpackTimeoutFlag: --bundle-unpack-timeout 0 means no limit, as OLM's flag; olm.Options
// reads 0 as its default, so the flag's 0 must reach it as a negative duration.
func TestUnpackTimeoutFlag(t *testing.T) {
	for flag, want := range map[time.Duration]time.Duration{
		0:                -1,
		-time.Second:     -1,
		10 * time.Minute: 10 * time.Minute,
		90 * time.Second: 90 * time.Second,
	} {
		if got := unpackTimeout(flag); got != want {
			t.Errorf("--bundle-unpack-timeout %v: %v, want %v", flag, got, want)
		}
	}
}
