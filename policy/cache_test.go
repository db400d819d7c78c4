package policy

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/fstest"

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

// TestFindingsCacheWithSandbox: with users' rules in the sandbox, each input is looked up
// in the cache once per evaluation (the sandbox's inputs are those it misses), and a cached
// input is neither sent to the sandbox nor evaluated.
func TestFindingsCacheWithSandbox(t *testing.T) {
	in := func(name string) Input {
		return cluster(name, individualApp("one", "ns", entry(configMap("ns", "c-"+name), "cm.yaml", 1)))
	}
	cache := NewFindingsCache()
	opts := Options{Cache: cache, Sandbox: &Sandbox{}, Policies: []PolicySource{examplePolicies}}
	want := evaluate(t, newEngine(t, Options{Policies: []PolicySource{examplePolicies}}), in("cl1"), in("cl2"))
	for round, counts := range [][2]int64{{0, 2}, {2, 2}} {
		got := evaluate(t, newEngine(t, opts), in("cl1"), in("cl2"))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round %d differs from an engine without sandbox or cache (-want +got):\n%s", round, diff)
		}
		if cache.Hits.Load() != counts[0] || cache.Misses.Load() != counts[1] {
			t.Errorf("after round %d: %d hits, %d misses; want %d, %d", round, cache.Hits.Load(), cache.Misses.Load(), counts[0], counts[1])
		}
	}
}

// TestCompileCache: engines made with one CompileCache from the same rule files share one
// compilation, and evaluate as a fresh engine does; a byte changed in a rule file is a
// miss that evaluates the changed rule (a kept compilation of other bytes is never used);
// a rule that fails to compile is not kept; the oldest of more than MaxCompiled sets goes.
func TestCompileCache(t *testing.T) {
	rules := func(msg string) PolicySource {
		return PolicySource{Root: "rules", FS: fstest.MapFS{"cm.rego": {Data: []byte(`package team.cm

deny contains {"rule": "TEAM001", "msg": "` + msg + `", "object": entry} if {
	some app in input.apps
	some entry in app.objects
	entry.object.kind == "ConfigMap"
}
`)}}}
	}
	in := cluster("", individualApp("one", "ns", entry(configMap("ns", "c"), "cm.yaml", 1)))
	messages := func(e *Engine) []string {
		var out []string
		for _, v := range evaluate(t, e, in) {
			if v.Rule == "TEAM001" {
				out = append(out, v.Message)
			}
		}
		return out
	}
	cache := NewCompileCache()
	count := func(what string, hits, misses int64) {
		t.Helper()
		if cache.Hits.Load() != hits || cache.Misses.Load() != misses {
			t.Fatalf("%s: %d hits, %d misses; want %d, %d", what, cache.Hits.Load(), cache.Misses.Load(), hits, misses)
		}
	}

	first := newEngine(t, Options{Compiled: cache, Policies: []PolicySource{rules("old")}})
	count("first engine", 0, 1)
	second := newEngine(t, Options{Compiled: cache, Policies: []PolicySource{rules("old")}})
	count("same rules again", 1, 1)
	if first.compiled != second.compiled {
		t.Error("the second engine compiled the same rules again")
	}
	want := evaluate(t, newEngine(t, Options{Policies: []PolicySource{rules("old")}}), in)
	if diff := cmp.Diff(want, evaluate(t, second, in)); diff != "" {
		t.Errorf("an engine of kept rules differs from a fresh one (-fresh +kept):\n%s", diff)
	}

	changed := newEngine(t, Options{Compiled: cache, Policies: []PolicySource{rules("new")}})
	count("one byte changed", 1, 2)
	if got := messages(changed); !cmp.Equal(got, []string{"new"}) {
		t.Errorf("after the rule changed: %q, want the new message", got)
	}
	if got := messages(newEngine(t, Options{Compiled: cache})); len(got) != 0 {
		t.Errorf("the built-in rules alone found %q: the user's rule was kept with them", got)
	}
	count("built-in rules alone", 1, 3)

	broken := PolicySource{Root: "rules", FS: fstest.MapFS{"b.rego": {Data: []byte("package b\n\ndeny contains x if { x := undefined_function(1) }\n")}}}
	for range 2 {
		if _, err := New(context.Background(), Options{Compiled: cache, Policies: []PolicySource{broken}}); err == nil {
			t.Fatal("a rule calling an undefined function compiled")
		}
	}
	count("a broken rule, twice", 1, 5)

	for i := range MaxCompiled {
		newEngine(t, Options{Compiled: cache, Policies: []PolicySource{rules(fmt.Sprintf("fill %d", i))}})
	}
	newEngine(t, Options{Compiled: cache, Policies: []PolicySource{rules("old")}})
	count("the oldest set again after MaxCompiled others", 1, 5+MaxCompiled+1)
}

// TestCompileCacheAtOnce: engines made at once from the same rules (the reconciler's
// workers, each reconciling a Sync) wait for one compilation instead of each compiling.
func TestCompileCacheAtOnce(t *testing.T) {
	cache := NewCompileCache()
	const n = 8
	engines := make([]*Engine, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e, err := New(context.Background(), Options{Compiled: cache})
			if err != nil {
				t.Error(err)
			}
			engines[i] = e
		})
	}
	wg.Wait()
	if cache.Misses.Load() != 1 || cache.Hits.Load() != n-1 {
		t.Errorf("%d engines made at once: %d compilations, %d reused; want 1 and %d", n, cache.Misses.Load(), cache.Hits.Load(), n-1)
	}
	for _, e := range engines[1:] {
		if e == nil || engines[0] == nil || e.compiled != engines[0].compiled {
			t.Fatal("engines made at once do not share one compilation")
		}
	}
}
