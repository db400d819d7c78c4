package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindingsCache: one cache shared by two engines of the same rules gives the second
// the first's findings for the same input without evaluating; a changed input, or other
// rules, are evaluated anew.
func TestFindingsCache(t *testing.T) {
	ns := entry(namespaceObject("team-a"), "cs/ns.yaml", 1)
	group := func(name string) Object {
		return entry(operatorGroup("team-a", name, map[string]any{"targetNamespaces": []any{"team-a"}}), "cs/"+name+".yaml", 1)
	}
	clash := cluster("cl1", clusterScopeApp(ns, group("og-1"), group("og-2")))
	fine := cluster("cl2", clusterScopeApp(ns, group("og-1")))

	cache := NewFindingsCache()
	base := newEngine(t, Options{Cache: cache})
	want := evaluate(t, newEngine(t, Options{}), clash, fine)
	if got := evaluate(t, base, clash, fine); !cmp.Equal(want, got) {
		t.Fatalf("with a cache: %v, want %v", got, want)
	}
	if cache.Hits.Load() != 0 || cache.Misses.Load() != 2 {
		t.Fatalf("first evaluation: %d hits, %d misses", cache.Hits.Load(), cache.Misses.Load())
	}

	head := newEngine(t, Options{Cache: cache})
	changed := cluster("cl2", clusterScopeApp(ns, group("og-1"), group("og-3")))
	got := evaluate(t, head, clash, changed)
	if cache.Hits.Load() != 1 || cache.Misses.Load() != 3 {
		t.Errorf("same rules, one cluster changed: %d hits, %d misses; want 1, 3", cache.Hits.Load(), cache.Misses.Load())
	}
	if diff := cmp.Diff(evaluate(t, newEngine(t, Options{}), clash, changed), got); diff != "" {
		t.Errorf("cached evaluation differs from a fresh one (-fresh +cached):\n%s", diff)
	}

	// Other rules (a user's package added): nothing is taken from the cache.
	other := newEngine(t, Options{Cache: cache, Policies: []PolicySource{examplePolicies}})
	evaluate(t, other, clash)
	if cache.Hits.Load() != 1 {
		t.Errorf("other rules used cached findings: %d hits", cache.Hits.Load())
	}
}
