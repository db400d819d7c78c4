package resolve_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/resolve"
)

// Why a Subscription fails, in OLM's words: the four filters of the named catalog, a channel
// that cannot be ordered, a catalog that cannot be read.
func TestSubscriptionFailures(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v1.1.0", replaces("a.v1.0.0"))))
	twoHeads := pkg("b", "stable", ch("stable", e("b.v1.0.0"), e("b.v2.0.0")))
	cycle := pkg("c", "stable", ch("stable", e("c.v1.0.0", replaces("c.v2.0.0")), e("c.v2.0.0", replaces("c.v1.0.0"))))
	catalogs := []resolve.Catalog{cat("community", "olm", a, twoHeads, cycle), cat("local", "ns")}
	tests := []struct {
		name   string
		sub    subB
		reason string
		msg    string
	}{
		{"a catalog that does not exist", sub("s", "a", "stable", "missing", "olm"), resolve.ReasonConstraintsNotSatisfiable,
			"constraints not satisfiable: no operators found from catalog missing in namespace olm referenced by subscription s, subscription s exists"},
		{"a catalog in a namespace the Subscription cannot see", sub("s", "a", "stable", "community", "elsewhere"), resolve.ReasonConstraintsNotSatisfiable,
			"constraints not satisfiable: no operators found from catalog community in namespace elsewhere referenced by subscription s, subscription s exists"},
		{"an empty catalog", sub("s", "a", "stable", "local", "ns"), resolve.ReasonConstraintsNotSatisfiable,
			"constraints not satisfiable: no operators found from catalog local in namespace ns referenced by subscription s, subscription s exists"},
		{"a package the catalog does not have", sub("s", "nope", "stable", "community", "olm"), resolve.ReasonConstraintsNotSatisfiable,
			"constraints not satisfiable: no operators found in package nope in the catalog referenced by subscription s, subscription s exists"},
		{"a channel the package does not have", sub("s", "a", "fast", "community", "olm"), resolve.ReasonConstraintsNotSatisfiable,
			"constraints not satisfiable: no operators found in channel fast of package a in the catalog referenced by subscription s, subscription s exists"},
		{"a startingCSV the channel does not have", sub("s", "a", "stable", "community", "olm").starting("a.v0.1.0"), resolve.ReasonConstraintsNotSatisfiable,
			"constraints not satisfiable: no operators found with name a.v0.1.0 in channel stable of package a in the catalog referenced by subscription s, subscription s exists"},
		{"a channel with two heads", sub("s", "b", "stable", "community", "olm"), resolve.ReasonErrorPreventedResolution,
			`a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "stable" of package "b": b.v1.0.0, b.v2.0.0`},
		{"a channel whose entries all replace one another", sub("s", "c", "stable", "community", "olm"), resolve.ReasonErrorPreventedResolution,
			`no channel heads (entries not replaced by another entry) found in channel "stable" of package "c"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resolveNS(t, catalogs, ns(subs(tt.sub)))
			got := res.Subscriptions[0].Resolution
			if got.Status != resolve.StatusFailed || got.Reason != tt.reason || got.Message != tt.msg {
				t.Errorf("resolution = %s %s %q\nwant Failed %s %q", got.Status, got.Reason, got.Message, tt.reason, tt.msg)
			}
			if len(res.Bundles) != 0 {
				t.Errorf("a failed Subscription installs %+v", res.Bundles)
			}
		})
	}
}

// As in OLM, a catalog that cannot be read stops every Subscription of the namespaces that
// see it, even those that do not use it: a provider in it could change every choice.
func TestBrokenCatalogStopsTheNamespace(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0")))
	catalogs := []resolve.Catalog{cat("community", "olm", a), {Name: "broken", Namespace: "olm", Err: errors.New("pull quay.io/x/broken:latest: unauthorized")}}
	res := resolveNS(t, catalogs, ns(subs(sub("s", "a", "stable", "community", "olm"))))
	want := resolve.Resolution{Status: resolve.StatusFailed, Reason: resolve.ReasonErrorPreventedResolution,
		Message: "error using catalogsource olm/broken: pull quay.io/x/broken:latest: unauthorized"}
	if diff := cmp.Diff(want, res.Subscriptions[0].Resolution); diff != "" {
		t.Errorf("resolution (-want +got):\n%s", diff)
	}
	// A catalog given without content is as broken.
	res = resolveNS(t, []resolve.Catalog{cat("community", "olm", a), {Name: "unread", Namespace: "olm"}}, ns(subs(sub("s", "a", "stable", "community", "olm"))))
	if got := res.Subscriptions[0].Resolution.Message; got != "error using catalogsource olm/unread: catalog olm/unread has no content" {
		t.Errorf("catalog without content: %q", got)
	}
	// A namespace whose OperatorGroup excludes the global catalogs does not see it (nor
	// community), so only its own catalog counts.
	n := ns(subs(sub("s", "a", "stable", "mine", "ns")))
	n.ExcludeGlobalCatalogs = true
	res = resolveNS(t, append(catalogs, cat("mine", "ns", a)), n)
	if got := res.Subscriptions[0].Resolution; got.Status != resolve.StatusResolved || got.Next != "a.v1.0.0" {
		t.Errorf("with the global catalogs excluded: %+v", got)
	}
}

// Which catalogs a namespace sees: its own and the global namespace's, unless its
// OperatorGroup excludes the global ones; never another namespace's.
func TestCatalogVisibility(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0")))
	catalogs := []resolve.Catalog{cat("global", "olm", a), cat("local", "ns", a), cat("other", "team-b", a)}
	tests := []struct {
		source, namespace string
		exclude           bool
		ok                bool
	}{
		{"global", "olm", false, true},
		{"global", "olm", true, false},
		{"local", "ns", false, true},
		{"local", "", false, true}, // an empty sourceNamespace is the Subscription's own
		{"local", "ns", true, true},
		{"other", "team-b", false, false},
	}
	for _, tt := range tests {
		n := ns(subs(sub("s", "a", "stable", tt.source, tt.namespace)))
		n.ExcludeGlobalCatalogs = tt.exclude
		got := resolveNS(t, catalogs, n).Subscriptions[0].Resolution
		if ok := got.Status == resolve.StatusResolved; ok != tt.ok {
			t.Errorf("%s/%s exclude=%v: %s %s, want resolved=%v", tt.namespace, tt.source, tt.exclude, got.Status, got.Message, tt.ok)
		}
	}
}

// olmsync's deliberate difference: a Subscription that cannot be resolved fails alone; OLM
// would stop every Subscription of the namespace with the same condition.
func TestOneBrokenSubscriptionDoesNotBlockTheNamespace(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0")))
	b := pkg("b", "stable", ch("stable", e("b.v1.0.0"))).requires("b.v1.0.0", "Missing.v1.example.com")
	catalogs := []resolve.Catalog{cat("c", "olm", a, b)}
	res := resolveNS(t, catalogs, ns(subs(
		sub("typo", "a", "stabel", "c", "olm"),
		sub("b", "b", "stable", "c", "olm"),
		sub("a", "a", "stable", "c", "olm"),
	)))
	got := map[string]resolve.Resolution{}
	for _, s := range res.Subscriptions {
		got[s.Name] = s.Resolution
	}
	if got["typo"].Status != resolve.StatusFailed || got["typo"].Reason != resolve.ReasonConstraintsNotSatisfiable {
		t.Errorf("typo: %+v", got["typo"])
	}
	wantB := "constraints not satisfiable: bundle b.v1.0.0 requires an operator providing an API with group: example.com, version: v1, kind: Missing, subscription b exists, subscription b requires c/olm/stable/b.v1.0.0"
	if got["b"].Status != resolve.StatusFailed || got["b"].Message != wantB {
		t.Errorf("b: %s %q\nwant %q", got["b"].Status, got["b"].Message, wantB)
	}
	if got["a"].Status != resolve.StatusResolved || got["a"].Next != "a.v1.0.0" {
		t.Errorf("a is blocked by the others: %+v", got["a"])
	}
	// The failed Subscription "typo" is to package a: its package may still be installed by
	// the Subscription "a", which names it directly.
	if len(res.Bundles) != 1 || res.Bundles[0].Name != "a.v1.0.0" || res.Bundles[0].Subscription != "a" {
		t.Errorf("bundles = %+v", res.Bundles)
	}
}

// Approval is read as OLM reads it; it does not change what is resolved.
func TestApproval(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0")))
	res := resolveNS(t, []resolve.Catalog{cat("c", "olm", a)}, ns(subs(sub("m", "a", "stable", "c", "olm").manual(), sub("x", "nope", "", "c", "olm"))))
	if res.Subscriptions[0].Approval != v1alpha1.ApprovalManual || res.Subscriptions[1].Approval != v1alpha1.ApprovalAutomatic {
		t.Errorf("approvals = %s, %s", res.Subscriptions[0].Approval, res.Subscriptions[1].Approval)
	}
}

// One Resolver serves many namespaces at once (the controllers resolve namespaces in
// parallel); under -race this test proves it only reads what New built.
func TestResolverIsSafeForConcurrentUse(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0")))).requires("a.v2.0.0", apiX)
	r := resolve.New([]resolve.Catalog{cat("c", "olm", a, provider("x", "1.0.0", "1.1.0"))}, resolve.Options{GlobalNamespace: "olm"})
	n := ns(subs(sub("a", "a", "stable", "c", "olm").at("a.v1.0.0")), installed(a, "a.v1.0.0"))
	want := r.Resolve(n)
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			got := r.Resolve(n)
			if !cmp.Equal(want, got, cmpBundle) {
				errs <- cmp.Diff(want, got, cmpBundle)
				return
			}
			errs <- ""
		}()
	}
	for range 8 {
		if d := <-errs; d != "" {
			t.Errorf("concurrent resolutions differ:\n%s", d)
		}
	}
}
