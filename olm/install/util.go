package install

import (
	"maps"
	"slices"
)

// sortedKeys returns m's keys in order, so that checks report the same key every time.
func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
