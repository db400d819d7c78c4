package resolve_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/olm/resolve"
)

// Seed 004's order of precedence when searching catalogs for an update (olmsync follows the
// seed where OLM's code looks only in spec.source; docs/olm.md):
//  1. the channel head in the Subscription's catalog, if it can skip to it;
//  2. the next Operator that replaces the current one, in that catalog;
//  3. the channel head in another visible catalog, if it can skip to it;
//  4. the next Operator that replaces the current one in any visible catalog.
//
// a.v1.0.0 is installed from catalog "named" in every case.
func TestSeedSourcePrecedence(t *testing.T) {
	tests := []struct {
		name     string
		catalogs []resolve.Catalog
		next     string
		source   *resolve.CatalogKey
		head     string
		path     []string
	}{
		{
			name: "1: the head of the Subscription's catalog skips to it",
			catalogs: []resolve.Catalog{
				cat("named", "olm", pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0")), e("a.v3.0.0", replaces("a.v2.0.0"), skipRange("<3.0.0"))))),
				cat("other", "olm", pkg("a", "stable", ch("stable", e("a.v9.0.0", skipRange("<9.0.0"))))),
			},
			next: "a.v3.0.0", source: key("named", "olm"), head: "a.v3.0.0", path: []string{"a.v3.0.0"},
		},
		{
			name: "2: the next replacement in the Subscription's catalog beats a head elsewhere",
			catalogs: []resolve.Catalog{
				cat("named", "olm", pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0")), e("a.v3.0.0", replaces("a.v2.0.0"))))),
				cat("other", "olm", pkg("a", "stable", ch("stable", e("a.v9.0.0", skipRange("<9.0.0"))))),
			},
			next: "a.v2.0.0", source: key("named", "olm"), head: "a.v3.0.0", path: []string{"a.v2.0.0", "a.v3.0.0"},
		},
		{
			name: "3: the head of another catalog skips to it",
			catalogs: []resolve.Catalog{
				cat("named", "olm", pkg("a", "stable", ch("stable", e("a.v5.0.0", replaces("a.v4.0.0"))))),
				cat("other", "olm", pkg("a", "stable", ch("stable", e("a.v8.0.0", replaces("a.v1.0.0")), e("a.v9.0.0", replaces("a.v8.0.0"), skipRange("<9.0.0"))))),
			},
			next: "a.v9.0.0", source: key("other", "olm"), head: "a.v5.0.0", path: []string{"a.v9.0.0"},
		},
		{
			name: "4: the next replacement in any other catalog",
			catalogs: []resolve.Catalog{
				cat("named", "olm", pkg("a", "stable", ch("stable", e("a.v5.0.0", replaces("a.v4.0.0"))))),
				cat("other", "olm", pkg("a", "stable", ch("stable", e("a.v8.0.0", replaces("a.v1.0.0")), e("a.v9.0.0", replaces("a.v8.0.0"))))),
			},
			next: "a.v8.0.0", source: key("other", "olm"), head: "a.v5.0.0", path: []string{"a.v8.0.0", "a.v9.0.0"},
		},
		{
			name: "3, among other catalogs: the higher priority first",
			catalogs: []resolve.Catalog{
				cat("named", "olm", pkg("a", "stable", ch("stable", e("a.v5.0.0", replaces("a.v4.0.0"))))),
				cat("a-low", "olm", pkg("a", "stable", ch("stable", e("a.v7.0.0", skipRange("<7.0.0"))))),
				withPriority(cat("z-high", "olm", pkg("a", "stable", ch("stable", e("a.v6.0.0", skipRange("<6.0.0"))))), 5),
			},
			next: "a.v6.0.0", source: key("z-high", "olm"), head: "a.v5.0.0", path: []string{"a.v6.0.0", "a.v7.0.0"},
		},
		{
			name: "only the same channel counts in another catalog",
			catalogs: []resolve.Catalog{
				cat("named", "olm", pkg("a", "stable", ch("stable", e("a.v5.0.0", replaces("a.v4.0.0"))))),
				cat("other", "olm", pkg("a", "fast", ch("fast", e("a.v9.0.0", skipRange("<9.0.0"))))),
			},
			head: "a.v5.0.0",
		},
	}
	v1 := installedCSV("a.v1.0.0", "1.0.0", prop("olm.package", map[string]string{"packageName": "a", "version": "1.0.0"}))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resolveNS(t, tt.catalogs, ns(subs(sub("a", "a", "stable", "named", "olm").at("a.v1.0.0")), v1))
			got := res.Subscriptions[0].Resolution
			if tt.next == "" {
				if got.Status != resolve.StatusFailed || got.Reason != resolve.ReasonNoUpgradePath {
					t.Errorf("resolution = %+v, want no upgrade path", got)
				}
				return
			}
			want := resolve.Resolution{Status: resolve.StatusResolved, Next: tt.next, NextSource: tt.source, Replaces: "a.v1.0.0", Head: tt.head,
				Path: tt.path, Message: tt.next + " replaces a.v1.0.0"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("resolution (-want +got):\n%s", diff)
			}
			if len(res.Bundles) != 1 || res.Bundles[0].Source != *tt.source || res.Bundles[0].Subscription != "a" {
				t.Errorf("bundles = %+v", res.Bundles)
			}
			if len(res.Generated) != 0 {
				t.Errorf("an upgrade from another catalog generated %+v", res.Generated)
			}
		})
	}
}

// The order of precedence is about updates: a new Subscription installs from its own
// catalog only, as OLM does.
func TestNewSubscriptionUsesOnlyItsCatalog(t *testing.T) {
	catalogs := []resolve.Catalog{cat("named", "olm", pkg("b", "stable", ch("stable", e("b.v1.0.0")))), cat("other", "olm", pkg("a", "stable", ch("stable", e("a.v1.0.0"))))}
	got := resolveNS(t, catalogs, ns(subs(sub("a", "a", "stable", "named", "olm")))).Subscriptions[0].Resolution
	if got.Status != resolve.StatusFailed || got.Message != "constraints not satisfiable: no operators found in package a in the catalog referenced by subscription a, subscription a exists" {
		t.Errorf("resolution = %+v", got)
	}
}

// A channel of another catalog that cannot be ordered offers no upgrade and is reported as
// a warning; the Subscription's own catalog decides.
func TestUnorderableChannelElsewhereIsAWarning(t *testing.T) {
	catalogs := []resolve.Catalog{
		cat("named", "olm", pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0"))))),
		cat("other", "olm", pkg("a", "stable", ch("stable", e("a.v8.0.0"), e("a.v9.0.0")))),
	}
	v1 := installedCSV("a.v1.0.0", "1.0.0", prop("olm.package", map[string]string{"packageName": "a", "version": "1.0.0"}))
	res := resolveNS(t, catalogs, ns(subs(sub("a", "a", "stable", "named", "olm").at("a.v1.0.0")), v1))
	if got := res.Subscriptions[0].Resolution; got.Next != "a.v2.0.0" {
		t.Errorf("resolution = %+v", got)
	}
	want := []string{`subscription a: channel stable of package a in catalog olm/other offers no upgrade: a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "stable" of package "a": a.v8.0.0, a.v9.0.0`}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
