package resolve_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/resolve"
)

func key(name, namespace string) *resolve.CatalogKey {
	return &resolve.CatalogKey{Name: name, Namespace: namespace}
}

// checkResolution resolves and compares the first Subscription's resolution.
func checkResolution(t *testing.T, catalogs []resolve.Catalog, n resolve.Namespace, want resolve.Resolution) *resolve.Result {
	t.Helper()
	res := resolveNS(t, catalogs, n)
	if diff := cmp.Diff(want, res.Subscriptions[0].Resolution); diff != "" {
		t.Errorf("resolution (-want +got):\n%s", diff)
	}
	return res
}

// The etcd package of seed 001's package manifest example: channels alpha (currentCSV
// etcdoperator.v0.9.2), beta (v0.9.0) and stable (v0.9.2), default alpha; each version
// replaces the one before.
func seedEtcd() pkgB {
	return pkg("etcd", "alpha",
		ch("alpha", e("etcdoperator.v0.6.1"), e("etcdoperator.v0.9.0", replaces("etcdoperator.v0.6.1")), e("etcdoperator.v0.9.2", replaces("etcdoperator.v0.9.0"))),
		ch("beta", e("etcdoperator.v0.6.1"), e("etcdoperator.v0.9.0", replaces("etcdoperator.v0.6.1"))),
		ch("stable", e("etcdoperator.v0.6.1"), e("etcdoperator.v0.9.0", replaces("etcdoperator.v0.6.1")), e("etcdoperator.v0.9.2", replaces("etcdoperator.v0.9.0"))),
	)
}

func TestSeedEtcdPackageManifest(t *testing.T) {
	etcd := seedEtcd()
	catalogs := []resolve.Catalog{cat("community", "olm", etcd)}
	tests := []struct {
		name string
		sub  subB
		csvs []v1alpha1.ClusterServiceVersion
		want resolve.Resolution
	}{
		{
			name: "no channel: the default channel's head",
			sub:  sub("etcd", "etcd", "", "community", "olm"),
			want: resolve.Resolution{Status: resolve.StatusResolved, Next: "etcdoperator.v0.9.2", NextSource: key("community", "olm"), Head: "etcdoperator.v0.9.2",
				Path: []string{"etcdoperator.v0.9.2"}, Message: "etcdoperator.v0.9.2 is installed"},
		},
		{
			name: "beta: its head, 0.9.0",
			sub:  sub("etcd", "etcd", "beta", "community", "olm"),
			want: resolve.Resolution{Status: resolve.StatusResolved, Next: "etcdoperator.v0.9.0", NextSource: key("community", "olm"), Head: "etcdoperator.v0.9.0",
				Path: []string{"etcdoperator.v0.9.0"}, Message: "etcdoperator.v0.9.0 is installed"},
		},
		{
			name: "stable from 0.6.1: one step at a time to the head",
			sub:  sub("etcd", "etcd", "stable", "community", "olm").at("etcdoperator.v0.6.1"),
			csvs: []v1alpha1.ClusterServiceVersion{installed(etcd, "etcdoperator.v0.6.1")},
			want: resolve.Resolution{Status: resolve.StatusResolved, Next: "etcdoperator.v0.9.0", NextSource: key("community", "olm"), Replaces: "etcdoperator.v0.6.1",
				Head: "etcdoperator.v0.9.2", Path: []string{"etcdoperator.v0.9.0", "etcdoperator.v0.9.2"}, Message: "etcdoperator.v0.9.0 replaces etcdoperator.v0.6.1"},
		},
		{
			name: "beta at its head: up to date",
			sub:  sub("etcd", "etcd", "beta", "community", "olm").at("etcdoperator.v0.9.0"),
			csvs: []v1alpha1.ClusterServiceVersion{installed(etcd, "etcdoperator.v0.9.0")},
			want: resolve.Resolution{Status: resolve.StatusUpToDate, Head: "etcdoperator.v0.9.0", Message: "etcdoperator.v0.9.0 is the head of channel beta"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkResolution(t, catalogs, ns(subs(tt.sub), tt.csvs...), tt.want)
		})
	}
}

// Seed 001/004 "Example upgrade path": 0.1.1 is installed, the catalog has 0.1.3, which
// replaces 0.1.2, which replaces 0.1.1. OLM installs 0.1.2, then 0.1.3.
func TestSeedUpgradePath(t *testing.T) {
	example := pkg("example", "alpha", ch("alpha",
		e("example.v0.1.1"), e("example.v0.1.2", replaces("example.v0.1.1")), e("example.v0.1.3", replaces("example.v0.1.2"))))
	catalogs := []resolve.Catalog{cat("operators", "olm", example)}
	steps := []struct {
		installed string
		want      resolve.Resolution
	}{
		{"example.v0.1.1", resolve.Resolution{Status: resolve.StatusResolved, Next: "example.v0.1.2", NextSource: key("operators", "olm"), Replaces: "example.v0.1.1",
			Head: "example.v0.1.3", Path: []string{"example.v0.1.2", "example.v0.1.3"}, Message: "example.v0.1.2 replaces example.v0.1.1"}},
		{"example.v0.1.2", resolve.Resolution{Status: resolve.StatusResolved, Next: "example.v0.1.3", NextSource: key("operators", "olm"), Replaces: "example.v0.1.2",
			Head: "example.v0.1.3", Path: []string{"example.v0.1.3"}, Message: "example.v0.1.3 replaces example.v0.1.2"}},
		{"example.v0.1.3", resolve.Resolution{Status: resolve.StatusUpToDate, Head: "example.v0.1.3", Message: "example.v0.1.3 is the head of channel alpha"}},
	}
	for _, step := range steps {
		t.Run(step.installed, func(t *testing.T) {
			res := checkResolution(t, catalogs, ns(subs(sub("example", "example", "alpha", "operators", "olm").at(step.installed)), installed(example, step.installed)), step.want)
			if step.want.Next != "" {
				want := []resolve.Bundle{{Name: step.want.Next, Package: "example", Channel: "alpha", Version: step.want.Next[len("example.v"):],
					Source: *key("operators", "olm"), Replaces: step.installed, Subscription: "example"}}
				if diff := cmp.Diff(want, res.Bundles, cmpBundle); diff != "" {
					t.Errorf("bundles (-want +got):\n%s", diff)
				}
			}
		})
	}
}

var cmpBundle = cmp.Comparer(func(a, b resolve.Bundle) bool {
	a.Content, b.Content = nil, nil
	return cmp.Equal(a, b)
})

// Seed 001/004 "Skipping upgrades": etcdoperator.v0.9.2 replaces v0.9.0 and skips the bad
// v0.9.1. Whether or not the cluster has seen v0.9.1, it gets one unique update, and a
// cluster that has not installed v0.9.1 never will.
func TestSeedSkips(t *testing.T) {
	oldCatalog := pkg("etcd", "alpha", ch("alpha",
		e("etcdoperator.v0.9.0"), e("etcdoperator.v0.9.1", replaces("etcdoperator.v0.9.0"))))
	newCatalog := pkg("etcd", "alpha", ch("alpha",
		e("etcdoperator.v0.9.0"), e("etcdoperator.v0.9.1", replaces("etcdoperator.v0.9.0")),
		e("etcdoperator.v0.9.2", replaces("etcdoperator.v0.9.0"), skips("etcdoperator.v0.9.1"))))
	sub := func() subB { return sub("etcd", "etcd", "alpha", "community", "olm") }
	tests := []struct {
		name      string
		catalog   pkgB
		installed string
		want      resolve.Resolution
	}{
		{"old catalog, 0.9.0 installed: the bad 0.9.1 is next", oldCatalog, "etcdoperator.v0.9.0",
			resolve.Resolution{Status: resolve.StatusResolved, Next: "etcdoperator.v0.9.1", NextSource: key("community", "olm"), Replaces: "etcdoperator.v0.9.0",
				Head: "etcdoperator.v0.9.1", Path: []string{"etcdoperator.v0.9.1"}, Message: "etcdoperator.v0.9.1 replaces etcdoperator.v0.9.0"}},
		{"new catalog, 0.9.0 installed: straight to 0.9.2, never through 0.9.1", newCatalog, "etcdoperator.v0.9.0",
			resolve.Resolution{Status: resolve.StatusResolved, Next: "etcdoperator.v0.9.2", NextSource: key("community", "olm"), Replaces: "etcdoperator.v0.9.0",
				Head: "etcdoperator.v0.9.2", Path: []string{"etcdoperator.v0.9.2"}, Message: "etcdoperator.v0.9.2 replaces etcdoperator.v0.9.0"}},
		{"new catalog, the bad 0.9.1 installed: 0.9.2 replaces it", newCatalog, "etcdoperator.v0.9.1",
			resolve.Resolution{Status: resolve.StatusResolved, Next: "etcdoperator.v0.9.2", NextSource: key("community", "olm"), Replaces: "etcdoperator.v0.9.1",
				Head: "etcdoperator.v0.9.2", Path: []string{"etcdoperator.v0.9.2"}, Message: "etcdoperator.v0.9.2 replaces etcdoperator.v0.9.1"}},
		{"new catalog, nothing installed: 0.9.2", newCatalog, "",
			resolve.Resolution{Status: resolve.StatusResolved, Next: "etcdoperator.v0.9.2", NextSource: key("community", "olm"),
				Head: "etcdoperator.v0.9.2", Path: []string{"etcdoperator.v0.9.2"}, Message: "etcdoperator.v0.9.2 is installed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := ns(subs(sub().at(tt.installed)))
			if tt.installed != "" {
				n.CSVs = append(n.CSVs, installed(tt.catalog, tt.installed))
			}
			checkResolution(t, []resolve.Catalog{cat("community", "olm", tt.catalog)}, n, tt.want)
		})
	}
}

// Seed 001/004 "Replacing multiple Operators": elasticsearch-operator.v4.1.2 carries
// olm.skipRange '>=4.1.0 <4.1.2'. Every installed version in the range updates to it at once,
// and the new CSV's spec.replaces names the CSV it actually replaces (OLM overwrites it). The
// channel still needs one replaces chain to be ordered (skipRange does not order it), so
// 4.1.2 also replaces 4.1.0, which the catalog keeps.
func TestSeedSkipRange(t *testing.T) {
	es := pkg("elasticsearch-operator", "4.1", ch("4.1",
		e("elasticsearch-operator.v4.1.0"),
		e("elasticsearch-operator.v4.1.2", replaces("elasticsearch-operator.v4.1.0"), skipRange(">=4.1.0 <4.1.2"))))
	catalogs := []resolve.Catalog{cat("redhat-operators", "olm", es)}
	tests := []struct {
		name      string
		installed string
		version   string
		want      resolve.Resolution
	}{
		{"4.1.0, in the catalog", "elasticsearch-operator.v4.1.0", "4.1.0",
			resolve.Resolution{Status: resolve.StatusResolved, Next: "elasticsearch-operator.v4.1.2", NextSource: key("redhat-operators", "olm"), Replaces: "elasticsearch-operator.v4.1.0",
				Head: "elasticsearch-operator.v4.1.2", Path: []string{"elasticsearch-operator.v4.1.2"}, Message: "elasticsearch-operator.v4.1.2 replaces elasticsearch-operator.v4.1.0"}},
		{"4.1.1, a version the catalog never had", "elasticsearch-operator.v4.1.1", "4.1.1",
			resolve.Resolution{Status: resolve.StatusResolved, Next: "elasticsearch-operator.v4.1.2", NextSource: key("redhat-operators", "olm"), Replaces: "elasticsearch-operator.v4.1.1",
				Head: "elasticsearch-operator.v4.1.2", Path: []string{"elasticsearch-operator.v4.1.2"}, Message: "elasticsearch-operator.v4.1.2 replaces elasticsearch-operator.v4.1.1"}},
		{"4.1.2-rc.1 is below 4.1.2 in semver precedence", "elasticsearch-operator.v4.1.2-rc.1", "4.1.2-rc.1",
			resolve.Resolution{Status: resolve.StatusResolved, Next: "elasticsearch-operator.v4.1.2", NextSource: key("redhat-operators", "olm"), Replaces: "elasticsearch-operator.v4.1.2-rc.1",
				Head: "elasticsearch-operator.v4.1.2", Path: []string{"elasticsearch-operator.v4.1.2"}, Message: "elasticsearch-operator.v4.1.2 replaces elasticsearch-operator.v4.1.2-rc.1"}},
		{"4.0.9, outside the range: no upgrade path", "elasticsearch-operator.v4.0.9", "4.0.9",
			resolve.Resolution{Status: resolve.StatusFailed, Reason: resolve.ReasonNoUpgradePath, Head: "elasticsearch-operator.v4.1.2",
				Message: "nothing in channel 4.1 of package elasticsearch-operator replaces the installed elasticsearch-operator.v4.0.9 (by replaces, skips or skipRange); the channel head is elasticsearch-operator.v4.1.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csv := installedCSV(tt.installed, tt.version, prop("olm.package", map[string]string{"packageName": "elasticsearch-operator", "version": tt.version}))
			res := checkResolution(t, catalogs, ns(subs(sub("es", "elasticsearch-operator", "4.1", "redhat-operators", "olm").at(tt.installed)), csv), tt.want)
			if tt.want.Next != "" && (len(res.Bundles) != 1 || res.Bundles[0].Replaces != tt.installed) {
				t.Errorf("bundles = %+v, want elasticsearch-operator.v4.1.2 with replaces %s", res.Bundles, tt.installed)
			}
		})
	}
}

// OLM honours skips and skipRange on any entry, and takes the candidate closest to the head:
// when the head does not cover the installed version but an older entry does, that entry is
// next, and the normal chain continues to the head. (a.v1.0.0 is no longer in the catalog.)
func TestSkipRangeNotOnTheHead(t *testing.T) {
	a := pkg("a", "stable", ch("stable",
		e("a.v2.0.0", skipRange("<2.0.0")),
		e("a.v3.0.0", replaces("a.v2.0.0"))))
	v1 := installedCSV("a.v1.0.0", "1.0.0", prop("olm.package", map[string]string{"packageName": "a", "version": "1.0.0"}))
	checkResolution(t, []resolve.Catalog{cat("c", "olm", a)}, ns(subs(sub("a", "a", "stable", "c", "olm").at("a.v1.0.0")), v1),
		resolve.Resolution{Status: resolve.StatusResolved, Next: "a.v2.0.0", NextSource: key("c", "olm"), Replaces: "a.v1.0.0", Head: "a.v3.0.0",
			Path: []string{"a.v2.0.0", "a.v3.0.0"}, Message: "a.v2.0.0 replaces a.v1.0.0"})
}

// Seed 001/004 "Z-stream support": a z-stream release replaces every earlier z-stream release
// of its minor version, so any z-stream release of the old catalog updates to the latest
// z-stream release of the new one, and versions the catalog does not carry are virtual nodes.
func TestSeedZStream(t *testing.T) {
	// New catalog: 4.0.3 and 4.1.2 are the latest z-streams; the other 4.0.x and 4.1.x are
	// not in it (virtual), except 4.0.0 and 4.1.0, which the replaces chain names.
	op := pkg("op", "stable", ch("stable",
		e("op.v4.0.0"),
		e("op.v4.0.3", replaces("op.v4.0.0"), skipRange(">=4.0.0 <4.0.3")),
		e("op.v4.1.0", replaces("op.v4.0.3")),
		e("op.v4.1.2", replaces("op.v4.1.0"), skipRange(">=4.1.0 <4.1.2"))))
	catalogs := []resolve.Catalog{cat("c", "olm", op)}
	tests := []struct {
		installed string
		next      string
		path      []string
	}{
		{"op.v4.0.0", "op.v4.0.3", []string{"op.v4.0.3", "op.v4.1.0", "op.v4.1.2"}},
		{"op.v4.0.1", "op.v4.0.3", []string{"op.v4.0.3", "op.v4.1.0", "op.v4.1.2"}},
		{"op.v4.0.2", "op.v4.0.3", []string{"op.v4.0.3", "op.v4.1.0", "op.v4.1.2"}},
		{"op.v4.1.0", "op.v4.1.2", []string{"op.v4.1.2"}},
		{"op.v4.1.1", "op.v4.1.2", []string{"op.v4.1.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.installed, func(t *testing.T) {
			version := versionOf(tt.installed)
			csv := installedCSV(tt.installed, version, prop("olm.package", map[string]string{"packageName": "op", "version": version}))
			checkResolution(t, catalogs, ns(subs(sub("op", "op", "stable", "c", "olm").at(tt.installed)), csv),
				resolve.Resolution{Status: resolve.StatusResolved, Next: tt.next, NextSource: key("c", "olm"), Replaces: tt.installed, Head: "op.v4.1.2",
					Path: tt.path, Message: tt.next + " replaces " + tt.installed})
		})
	}
}

// startingCSV is used while nothing is installed; it may name an entry that another entry
// skips (it is matched before the channel is ordered), and the normal upgrades follow.
func TestStartingCSV(t *testing.T) {
	a := pkg("a", "stable", ch("stable",
		e("a.v1.0.0"), e("a.v1.1.0", replaces("a.v1.0.0")), e("a.v2.0.0", replaces("a.v1.0.0"), skips("a.v1.1.0"))))
	catalogs := []resolve.Catalog{cat("c", "olm", a)}
	checkResolution(t, catalogs, ns(subs(sub("a", "a", "stable", "c", "olm").starting("a.v1.1.0"))),
		resolve.Resolution{Status: resolve.StatusResolved, Next: "a.v1.1.0", NextSource: key("c", "olm"), Head: "a.v2.0.0",
			Path: []string{"a.v1.1.0", "a.v2.0.0"}, Message: "a.v1.1.0 is installed"})
	// Once something is installed, startingCSV no longer counts.
	checkResolution(t, catalogs, ns(subs(sub("a", "a", "stable", "c", "olm").starting("a.v1.1.0").at("a.v1.0.0")), installed(a, "a.v1.0.0")),
		resolve.Resolution{Status: resolve.StatusResolved, Next: "a.v2.0.0", NextSource: key("c", "olm"), Replaces: "a.v1.0.0", Head: "a.v2.0.0",
			Path: []string{"a.v2.0.0"}, Message: "a.v2.0.0 replaces a.v1.0.0"})
}

// Without spec.channel OLM orders candidates default channel first, then the other channels
// by name, so an operator installed from another channel upgrades there.
func TestNoChannelUpgradesFromAnyChannel(t *testing.T) {
	a := pkg("a", "stable",
		ch("fast", e("a.v1.0.0"), e("a.v1.1.0", replaces("a.v1.0.0"))),
		ch("stable", e("a.v0.9.0")))
	checkResolution(t, []resolve.Catalog{cat("c", "olm", a)}, ns(subs(sub("a", "a", "", "c", "olm").at("a.v1.0.0")), installed(a, "a.v1.0.0")),
		resolve.Resolution{Status: resolve.StatusResolved, Next: "a.v1.1.0", NextSource: key("c", "olm"), Replaces: "a.v1.0.0", Head: "a.v0.9.0",
			Path: []string{"a.v1.1.0"}, Message: "a.v1.1.0 replaces a.v1.0.0"})
}

// olm.deprecations entries about the installed CSV become informational conditions; the
// channel's is left out when the Subscription names no channel, and none is evaluated when
// the installed CSV is not in the subscribed channel.
func TestDeprecations(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0"))), ch("fast", e("a.v3.0.0"))).
		deprecate("olm.package", "", "use package b").
		deprecate("olm.channel", "stable", "use fast").
		deprecate("olm.bundle", "a.v1.0.0", "has a CVE")
	catalogs := []resolve.Catalog{cat("c", "olm", a)}
	all := []resolve.Deprecation{
		{Condition: v1alpha1.SubscriptionPackageDeprecated, Message: "olm.package/a: use package b"},
		{Condition: v1alpha1.SubscriptionChannelDeprecated, Message: "olm.channel/stable: use fast"},
		{Condition: v1alpha1.SubscriptionBundleDeprecated, Message: "olm.bundle/a.v1.0.0: has a CVE"},
	}
	tests := []struct {
		name    string
		channel string
		want    []resolve.Deprecation
	}{
		{"the subscribed channel", "stable", all},
		{"no channel named: no channel deprecation", "", []resolve.Deprecation{all[0], all[2]}},
		{"installed CSV not in the subscribed channel", "fast", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resolveNS(t, catalogs, ns(subs(sub("a", "a", tt.channel, "c", "olm").at("a.v1.0.0")), installed(a, "a.v1.0.0")))
			if diff := cmp.Diff(tt.want, res.Subscriptions[0].Deprecations); diff != "" {
				t.Errorf("deprecations (-want +got):\n%s", diff)
			}
		})
	}
}
