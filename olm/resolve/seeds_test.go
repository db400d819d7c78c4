package resolve_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/olm/resolve"
)

// The dependency examples of seeds 001 and 004, in which "a provider is an Operator which
// owns a CRD or API service". APIs A, B, A2, B2 and C are Kind.v1.example.com.
const (
	apiA  = "A.v1.example.com"
	apiB  = "B.v1.example.com"
	apiA2 = "A2.v1.example.com"
	apiB2 = "B2.v1.example.com"
	apiC  = "C.v1.example.com"
)

// "Example: Version deadlock": A's provider requires B, B's provider requires A; A's
// provider updates to provide A2 and require B2, B's provider to provide B2 and require A2.
// Updating either alone cannot work; OLM resolves the namespace as a whole and updates both
// at once.
func TestSeedVersionDeadlock(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0")))).
		provides("a.v1.0.0", apiA).requires("a.v1.0.0", apiB).
		provides("a.v2.0.0", apiA2).requires("a.v2.0.0", apiB2)
	b := pkg("b", "stable", ch("stable", e("b.v1.0.0"), e("b.v2.0.0", replaces("b.v1.0.0")))).
		provides("b.v1.0.0", apiB).requires("b.v1.0.0", apiA).
		provides("b.v2.0.0", apiB2).requires("b.v2.0.0", apiA2)
	catalogs := []resolve.Catalog{cat("c", "olm", a, b)}
	n := ns(subs(sub("a", "a", "stable", "c", "olm").at("a.v1.0.0"), sub("b", "b", "stable", "c", "olm").at("b.v1.0.0")),
		installed(a, "a.v1.0.0"), installed(b, "b.v1.0.0"))
	res := resolveNS(t, catalogs, n)
	for _, name := range []string{"a", "b"} {
		got := res.Subscription(name).Resolution
		if got.Status != resolve.StatusResolved || got.Next != name+".v2.0.0" || got.Replaces != name+".v1.0.0" {
			t.Errorf("%s: %+v, want %s.v2.0.0 replacing %s.v1.0.0", name, got, name, name)
		}
	}
	want := []resolve.Bundle{
		{Name: "a.v2.0.0", Package: "a", Channel: "stable", Version: "2.0.0", Source: *key("c", "olm"), Replaces: "a.v1.0.0", Subscription: "a"},
		{Name: "b.v2.0.0", Package: "b", Channel: "stable", Version: "2.0.0", Source: *key("c", "olm"), Replaces: "b.v1.0.0", Subscription: "b"},
	}
	if diff := cmp.Diff(want, res.Bundles, cmpBundle); diff != "" {
		t.Errorf("both upgrades come together (-want +got):\n%s", diff)
	}

	// Without a Subscription, B's provider cannot move: A's upgrade is held, and the
	// message says why.
	n = ns(subs(sub("a", "a", "stable", "c", "olm").at("a.v1.0.0")), installed(a, "a.v1.0.0"), installed(b, "b.v1.0.0"))
	got := resolveNS(t, catalogs, n).Subscriptions[0].Resolution
	wantHeld := resolve.Resolution{Status: resolve.StatusFailed, Reason: resolve.ReasonUpgradeHeld, Head: "a.v2.0.0", Path: []string{"a.v2.0.0"},
		Message: "the upgrade from a.v1.0.0 is held back: constraints not satisfiable: " +
			"@existing/ns//a.v1.0.0, c/olm/stable/a.v1.0.0 and c/olm/stable/a.v2.0.0 originate from package a, " +
			"bundle b.v1.0.0 requires an operator providing an API with group: example.com, version: v1, kind: A, " +
			"clusterserviceversion b.v1.0.0 exists and is not referenced by a subscription, " +
			"subscription a exists, subscription a requires at least one of c/olm/stable/a.v2.0.0 or @existing/ns//a.v1.0.0, subscription a upgrades from a.v1.0.0"}
	if diff := cmp.Diff(wantHeld, got); diff != "" {
		t.Errorf("A alone (-want +got):\n%s", diff)
	}
}

// "Example: Deprecating dependent APIs": A's provider depends on B; B's provider has a
// Subscription and updates to provide C instead of B. Updating would leave A without B, so
// OLM keeps B's provider where it is (seed 001: OLM must never "update an Operator in a way
// that breaks another that depends upon it"). olmsync says why.
func TestSeedDeprecatingDependentAPIs(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"))).provides("a.v1.0.0", apiA).requires("a.v1.0.0", apiB)
	b := pkg("b", "stable", ch("stable", e("b.v1.0.0"), e("b.v2.0.0", replaces("b.v1.0.0")))).
		provides("b.v1.0.0", apiB).provides("b.v2.0.0", apiC)
	catalogs := []resolve.Catalog{cat("c", "olm", a, b)}
	for _, withSubA := range []bool{true, false} {
		n := ns(subs(sub("b", "b", "stable", "c", "olm").at("b.v1.0.0")), installed(a, "a.v1.0.0"), installed(b, "b.v1.0.0"))
		if withSubA {
			n.Subscriptions = append(n.Subscriptions, sub("a", "a", "stable", "c", "olm").at("a.v1.0.0").get())
		}
		res := resolveNS(t, catalogs, n)
		got := res.Subscription("b").Resolution
		if got.Status != resolve.StatusFailed || got.Reason != resolve.ReasonUpgradeHeld {
			t.Fatalf("subscription a=%v: b is %+v, want the upgrade held", withSubA, got)
		}
		wantMsg := "the upgrade from b.v1.0.0 is held back: constraints not satisfiable: " +
			"@existing/ns//b.v1.0.0, c/olm/stable/b.v1.0.0 and c/olm/stable/b.v2.0.0 originate from package b, " +
			"bundle a.v1.0.0 requires an operator providing an API with group: example.com, version: v1, kind: B, " +
			"clusterserviceversion a.v1.0.0 exists and is not referenced by a subscription, " +
			"subscription b exists, subscription b requires at least one of c/olm/stable/b.v2.0.0 or @existing/ns//b.v1.0.0, subscription b upgrades from b.v1.0.0"
		if withSubA {
			wantMsg = "the upgrade from b.v1.0.0 is held back: constraints not satisfiable: " +
				"@existing/ns//b.v1.0.0, c/olm/stable/b.v1.0.0 and c/olm/stable/b.v2.0.0 originate from package b, " +
				"bundle a.v1.0.0 requires an operator providing an API with group: example.com, version: v1, kind: B, " +
				"subscription a exists, subscription a requires @existing/ns//a.v1.0.0, " +
				"subscription b exists, subscription b requires at least one of c/olm/stable/b.v2.0.0 or @existing/ns//b.v1.0.0, subscription b upgrades from b.v1.0.0"
		}
		if got.Message != wantMsg {
			t.Errorf("subscription a=%v:\n got %q\nwant %q", withSubA, got.Message, wantMsg)
		}
		if len(res.Bundles) != 0 {
			t.Errorf("subscription a=%v: installs %+v", withSubA, res.Bundles)
		}
	}

	// When A's provider also updates, to a version that no longer needs B, both go ahead.
	a2 := pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0")))).
		provides("a.v1.0.0", apiA).requires("a.v1.0.0", apiB).provides("a.v2.0.0", apiA).requires("a.v2.0.0", apiC)
	res := resolveNS(t, []resolve.Catalog{cat("c", "olm", a2, b)}, ns(subs(sub("b", "b", "stable", "c", "olm").at("b.v1.0.0"), sub("a", "a", "stable", "c", "olm").at("a.v1.0.0")),
		installed(a2, "a.v1.0.0"), installed(b, "b.v1.0.0")))
	for _, name := range []string{"a", "b"} {
		if got := res.Subscription(name).Resolution; got.Next != name+".v2.0.0" {
			t.Errorf("%s: %+v", name, got)
		}
	}
}

// An installed operator's dependency range holds its provider back, without an error in
// OLM (verified in OLM: a requires c <0.2.0, the Subscription to c stays at 0.1.0).
func TestInstalledDependentHoldsAnUpgrade(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"))).requiresPackage("a.v1.0.0", "c", "<0.2.0")
	c := pkg("c", "stable", ch("stable", e("c.v0.1.0"), e("c.v0.2.0", replaces("c.v0.1.0"))))
	res := resolveNS(t, []resolve.Catalog{cat("cat", "olm", a, c)}, ns(
		subs(sub("a", "a", "stable", "cat", "olm").at("a.v1.0.0"), sub("c", "c", "stable", "cat", "olm").at("c.v0.1.0")),
		installed(a, "a.v1.0.0"), installed(c, "c.v0.1.0")))
	if got := res.Subscription("a").Resolution; got.Status != resolve.StatusUpToDate {
		t.Errorf("a: %+v", got)
	}
	got := res.Subscription("c").Resolution
	if got.Status != resolve.StatusFailed || got.Reason != resolve.ReasonUpgradeHeld || got.Head != "c.v0.2.0" || !cmp.Equal(got.Path, []string{"c.v0.2.0"}) {
		t.Errorf("c: %+v", got)
	}
	if len(res.Bundles) != 0 {
		t.Errorf("bundles = %+v", res.Bundles)
	}
}

// Resolution takes Subscriptions in order, each the most preferred candidate that fits: when
// two upgrades exclude each other (both new versions provide one API), the first
// Subscription's wins and the second is held, although it could move if the first did not.
func TestOrderOfSubscriptionsDecidesBetweenExclusiveUpgrades(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0")))).provides("a.v2.0.0", apiX)
	b := pkg("b", "stable", ch("stable", e("b.v1.0.0"), e("b.v2.0.0", replaces("b.v1.0.0")))).provides("b.v2.0.0", apiX)
	res := resolveNS(t, []resolve.Catalog{cat("c", "olm", a, b)}, ns(
		subs(sub("a", "a", "stable", "c", "olm").at("a.v1.0.0"), sub("b", "b", "stable", "c", "olm").at("b.v1.0.0")),
		installed(a, "a.v1.0.0"), installed(b, "b.v1.0.0")))
	if got := res.Subscription("a").Resolution; got.Next != "a.v2.0.0" {
		t.Errorf("a: %+v", got)
	}
	want := "the upgrade from b.v1.0.0 is held back: an upgrade is possible only if other Subscriptions of the namespace took different bundles; resolution takes them in order and keeps the installed CSV"
	if got := res.Subscription("b").Resolution; got.Reason != resolve.ReasonUpgradeHeld || got.Message != want {
		t.Errorf("b: %+v", got)
	}
}

// The search is bounded: a namespace that needs more steps fails rather than hold a
// controller.
func TestSearchBound(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"))).requires("a.v1.0.0", apiX)
	catalogs := []resolve.Catalog{cat("c", "olm", a, provider("x", "1.0.0"))}
	res := resolve.New(catalogs, resolve.Options{GlobalNamespace: "olm", MaxSteps: 2}).Resolve(ns(subs(sub("a", "a", "stable", "c", "olm"))))
	want := resolve.Resolution{Status: resolve.StatusFailed, Reason: resolve.ReasonErrorPreventedResolution, Head: "a.v1.0.0",
		Message: "resolution of namespace ns stopped after 2 steps: cancelled before a solution could be found"}
	if diff := cmp.Diff(want, res.Subscriptions[0].Resolution); diff != "" {
		t.Errorf("resolution (-want +got):\n%s", diff)
	}
	if got := resolve.New(catalogs, resolve.Options{GlobalNamespace: "olm"}).Resolve(ns(subs(sub("a", "a", "stable", "c", "olm")))); got.Subscriptions[0].Resolution.Status != resolve.StatusResolved {
		t.Errorf("with the default bound: %+v", got.Subscriptions[0].Resolution)
	}
}
