package subscription

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
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

// SameSubscriptions reports whether the namespace's Subscriptions now (their metadata) are
// those a pass resolved (as it read them): the same objects (by UID), none added or gone,
// none with a changed spec (generation) or annotations (a pin, an approval choice: the
// resolution and approval read them). A status write is no change: only the pass writes it.
func SameSubscriptions(resolved []v1alpha1.Subscription, now []metav1.PartialObjectMetadata) bool {
	if len(resolved) != len(now) {
		return false
	}
	byUID := make(map[types.UID]*metav1.PartialObjectMetadata, len(now))
	for i := range now {
		byUID[now[i].UID] = &now[i]
	}
	for i := range resolved {
		s := &resolved[i]
		n, ok := byUID[s.UID]
		if !ok || n.Generation != s.Generation || !maps.Equal(n.Annotations, s.Annotations) {
			return false
		}
	}
	return true
}
