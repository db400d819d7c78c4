package subscription

import (
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// Write is one object a pass wrote (a Subscription's status, an InstallPlan created,
// approved or given its steps), by kind and name, with the resourceVersion the write returned.
type Write struct {
	Kind, Name      string
	ResourceVersion string
}

// CacheLag is what Behind finds of a namespace's writes in the cache's view of it.
type CacheLag struct {
	// Shown are the writes the view holds (at their resourceVersion or a newer one).
	Shown []Write
	// Older are the writes of objects the view holds at an older resourceVersion.
	Older []Write
	// Missing are the writes of objects the view does not hold: not in the cache yet, or
	// deleted since (the API server tells which).
	Missing []Write
}

// Behind compares a namespace's writes with the resourceVersions the cache's view holds
// (by kind, then name). A pass decides only from a view that shows all of its namespace's
// writes: from an older one it would make a second InstallPlan for a resolution whose plan
// and reference to it the view does not show yet. A resourceVersion that is not a
// well-formed number (the API server's are) counts as shown: nothing to wait for.
func Behind(writes []Write, view map[string]map[string]string) CacheLag {
	var lag CacheLag
	for _, w := range writes {
		have, ok := view[w.Kind][w.Name]
		if !ok {
			lag.Missing = append(lag.Missing, w)
			continue
		}
		if c, err := resourceversion.CompareResourceVersion(have, w.ResourceVersion); err == nil && c < 0 {
			lag.Older = append(lag.Older, w)
			continue
		}
		lag.Shown = append(lag.Shown, w)
	}
	return lag
}
