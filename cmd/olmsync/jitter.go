//go:build !olmsync_light

package main

import (
	"math/rand"
	randv2 "math/rand/v2"
)

// jitterRand is the random source of the Syncs' requeue jitter (--interval-jitter-percentage).
// flux's jitter package draws from one *rand.Rand for every call, and the Sync controller's
// workers call it at once; given none, it makes a rand.Rand whose source is not safe for
// concurrent use (a data race under -race, and a source whose state concurrent draws can
// corrupt). This one draws from math/rand/v2's generator, which is.
func jitterRand() *rand.Rand { return rand.New(sharedSource{}) }

// sharedSource is a rand.Source64 over math/rand/v2's top-level generator: safe for
// concurrent use, seeded by the runtime, so Seed does nothing.
type sharedSource struct{}

func (sharedSource) Int63() int64   { return randv2.Int64() }
func (sharedSource) Uint64() uint64 { return randv2.Uint64() }
func (sharedSource) Seed(int64)     {}
