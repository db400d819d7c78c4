//go:build race

package check

// raceEnabled is true in a test binary built with -race, whose checks take several times
// as long: the corpus tests take fewer revisions.
const raceEnabled = true
