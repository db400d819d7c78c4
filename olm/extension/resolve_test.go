package extension

import (
	"encoding/json"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/olmsync/olmsync/olm/catalog"
)

// pkgBuilder builds one package of a catalog by hand.
type pkgBuilder struct{ p *catalog.Package }

func pkg(name string) *pkgBuilder { return &pkgBuilder{p: &catalog.Package{Name: name}} }

// bundle adds a bundle with its olm.package property and extra properties.
func (b *pkgBuilder) bundle(name, version string, props ...catalog.Property) *pkgBuilder {
	v, _ := json.Marshal(map[string]string{"packageName": b.p.Name, "version": version})
	bd := &catalog.Bundle{Name: name, Package: b.p.Name, Image: "quay.io/example/" + name + "@sha256:0",
		Properties: append([]catalog.Property{{Type: catalog.PropertyPackage, Value: v}}, props...)}
	bd.Version, _ = semver.Parse(version)
	b.p.Bundles = append(b.p.Bundles, bd)
	return b
}

func (b *pkgBuilder) channel(name string, entries ...catalog.ChannelEntry) *pkgBuilder {
	b.p.Channels = append(b.p.Channels, &catalog.Channel{Package: b.p.Name, Name: name, Entries: entries})
	return b
}

func (b *pkgBuilder) deprecate(bundle string) *pkgBuilder {
	b.p.Deprecations = append(b.p.Deprecations, catalog.Deprecation{Reference: catalog.DeprecationReference{Schema: "olm.bundle", Name: bundle}, Message: "old"})
	return b
}

func content(pkgs ...*pkgBuilder) *catalog.Catalog {
	c := &catalog.Catalog{}
	for _, p := range pkgs {
		c.Packages = append(c.Packages, p.p)
	}
	c.Sort()
	return c
}

func cat(name string, priority int32, c *catalog.Catalog) Catalog {
	cc := &ClusterCatalog{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: ClusterCatalogSpec{Priority: priority}}
	return CatalogOf(cc, c, nil)
}

// etcd: 0.9.0 ← 0.9.2 ← 0.9.4 (replaces), 1.0.0 skipRange >=0.9.0 <1.0.0; stable holds
// only 0.9.0 and 0.9.2.
func etcd() *pkgBuilder {
	return pkg("etcd").
		bundle("etcd.v0.9.0", "0.9.0").bundle("etcd.v0.9.2", "0.9.2").
		bundle("etcd.v0.9.4", "0.9.4").bundle("etcd.v1.0.0", "1.0.0").
		channel("alpha",
			catalog.ChannelEntry{Name: "etcd.v0.9.0"},
			catalog.ChannelEntry{Name: "etcd.v0.9.2", Replaces: "etcd.v0.9.0"},
			catalog.ChannelEntry{Name: "etcd.v0.9.4", Replaces: "etcd.v0.9.2"},
			catalog.ChannelEntry{Name: "etcd.v1.0.0", SkipRange: ">=0.9.0 <1.0.0"}).
		channel("stable",
			catalog.ChannelEntry{Name: "etcd.v0.9.0"},
			catalog.ChannelEntry{Name: "etcd.v0.9.2", Replaces: "etcd.v0.9.0"})
}

type extOpt func(*ClusterExtension)

func ext(pkgName string, opts ...extOpt) *ClusterExtension {
	e := &ClusterExtension{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: ClusterExtensionSpec{
		Namespace: "x", Source: SourceConfig{SourceType: SourceTypeCatalog, Catalog: &CatalogFilter{PackageName: pkgName}}}}
	for _, o := range opts {
		o(e)
	}
	return e
}

func version(v string) extOpt { return func(e *ClusterExtension) { e.Spec.Source.Catalog.Version = v } }
func channels(c ...string) extOpt {
	return func(e *ClusterExtension) { e.Spec.Source.Catalog.Channels = c }
}
func selfCertified(e *ClusterExtension) {
	e.Spec.Source.Catalog.UpgradeConstraintPolicy = UpgradeConstraintPolicySelfCertified
}
func installed(name, v string) extOpt {
	return func(e *ClusterExtension) {
		e.Status.Install = &InstallStatus{Bundle: BundleMetadata{Name: name, Version: v}}
	}
}
func selector(l map[string]string) extOpt {
	return func(e *ClusterExtension) { e.Spec.Source.Catalog.Selector = &metav1.LabelSelector{MatchLabels: l} }
}

func TestResolve(t *testing.T) {
	one := []Catalog{cat("operatorhub", 0, content(etcd()))}
	dep := catalog.Property{Type: catalog.PropertyPackageRequired, Value: json.RawMessage(`{"packageName":"b","versionRange":">=1.0.0"}`)}
	tests := []struct {
		name string
		ext  *ClusterExtension
		cats []Catalog
		want *Decision
		err  string
	}{{
		name: "latest of every channel",
		ext:  ext("etcd"), cats: one,
		want: &Decision{Package: "etcd", Bundle: "etcd.v1.0.0", Version: "1.0.0", Image: "quay.io/example/etcd.v1.0.0@sha256:0",
			Catalog: "operatorhub", Channels: []string{"alpha"}, Change: ChangeInstall},
	}, {
		name: "a wildcard range (Masterminds syntax)",
		ext:  ext("etcd", version("0.9.x")), cats: one,
		want: &Decision{Package: "etcd", Bundle: "etcd.v0.9.4", Version: "0.9.4", Image: "quay.io/example/etcd.v0.9.4@sha256:0",
			Catalog: "operatorhub", Channels: []string{"alpha"}, Change: ChangeInstall},
	}, {
		name: "a comma-separated range",
		ext:  ext("etcd", version(">=0.9.0, <0.9.3")), cats: one,
		want: &Decision{Package: "etcd", Bundle: "etcd.v0.9.2", Version: "0.9.2", Image: "quay.io/example/etcd.v0.9.2@sha256:0",
			Catalog: "operatorhub", Channels: []string{"alpha", "stable"}, Change: ChangeInstall},
	}, {
		name: "a channel",
		ext:  ext("etcd", channels("stable")), cats: one,
		want: &Decision{Package: "etcd", Bundle: "etcd.v0.9.2", Version: "0.9.2", Image: "quay.io/example/etcd.v0.9.2@sha256:0",
			Catalog: "operatorhub", Channels: []string{"stable"}, Change: ChangeInstall},
	}, {
		name: "channel and range exclude everything",
		ext:  ext("etcd", channels("stable"), version(">=1.0.0")), cats: one,
		err: `no bundles found for package "etcd" matching version ">=1.0.0" in channels [stable]`,
	}, {
		name: "a channel the package does not have",
		ext:  ext("etcd", channels("fast")), cats: one,
		err: `no bundles found for package "etcd" in channels [fast]`,
	}, {
		name: "an unknown package",
		ext:  ext("nope"), cats: one,
		err: `no bundles found for package "nope"`,
	}, {
		name: "no catalogs at all",
		ext:  ext("etcd"),
		err:  `no bundles found for package "etcd"`,
	}, {
		name: "an invalid range",
		ext:  ext("etcd", version("not-a-range")), cats: one,
		err: `desired version range "not-a-range" is invalid: improper constraint: "not-a-range"`,
	}, {
		name: "CatalogProvided: the highest successor (skipRange)",
		ext:  ext("etcd", installed("etcd.v0.9.2", "0.9.2")), cats: one,
		want: &Decision{Package: "etcd", Bundle: "etcd.v1.0.0", Version: "1.0.0", Image: "quay.io/example/etcd.v1.0.0@sha256:0",
			Catalog: "operatorhub", Channels: []string{"alpha"}, Change: ChangeUpgrade, Edge: "skipRange >=0.9.0 <1.0.0"},
	}, {
		name: "CatalogProvided: a replaces edge within the range",
		ext:  ext("etcd", installed("etcd.v0.9.2", "0.9.2"), version("<1.0.0")), cats: one,
		want: &Decision{Package: "etcd", Bundle: "etcd.v0.9.4", Version: "0.9.4", Image: "quay.io/example/etcd.v0.9.4@sha256:0",
			Catalog: "operatorhub", Channels: []string{"alpha"}, Change: ChangeUpgrade, Edge: "replaces etcd.v0.9.2"},
	}, {
		name: "CatalogProvided: edges only of the named channels; the installed bundle stays",
		ext:  ext("etcd", installed("etcd.v0.9.2", "0.9.2"), channels("stable")), cats: one,
		want: &Decision{Package: "etcd", Bundle: "etcd.v0.9.2", Version: "0.9.2", Image: "quay.io/example/etcd.v0.9.2@sha256:0",
			Catalog: "operatorhub", Channels: []string{"stable"}, Change: ChangeStay},
	}, {
		name: "CatalogProvided: no edge to the pinned version",
		ext:  ext("etcd", installed("etcd.v0.9.0", "0.9.0"), version("0.9.4")), cats: one,
		err: `error upgrading from currently installed version "0.9.0": no bundles found for package "etcd" matching version "0.9.4"`,
	}, {
		name: "SelfCertified: any version in the range",
		ext:  ext("etcd", installed("etcd.v0.9.0", "0.9.0"), version("0.9.4"), selfCertified), cats: one,
		want: &Decision{Package: "etcd", Bundle: "etcd.v0.9.4", Version: "0.9.4", Image: "quay.io/example/etcd.v0.9.4@sha256:0",
			Catalog: "operatorhub", Channels: []string{"alpha"}, Change: ChangeUpgrade},
	}, {
		name: "SelfCertified: a downgrade",
		ext:  ext("etcd", installed("etcd.v1.0.0", "1.0.0"), version("<1.0.0"), selfCertified), cats: one,
		want: &Decision{Package: "etcd", Bundle: "etcd.v0.9.4", Version: "0.9.4", Image: "quay.io/example/etcd.v0.9.4@sha256:0",
			Catalog: "operatorhub", Channels: []string{"alpha"}, Change: ChangeDowngrade},
	}, {
		name: "CatalogProvided refuses the downgrade",
		ext:  ext("etcd", installed("etcd.v1.0.0", "1.0.0"), version("<1.0.0")), cats: one,
		err: `error upgrading from currently installed version "1.0.0": no bundles found for package "etcd" matching version "<1.0.0"`,
	}, {
		name: "an installed version that is not semver",
		ext:  ext("etcd", installed("etcd.v1", "1.0")), cats: one,
		err: `error walking catalogs: error finding upgrade edges: failed to get version and release of installed bundle: No Major.Minor.Patch elements found`,
	}, {
		name: "priority: the higher catalog wins over a higher version",
		ext:  ext("etcd"),
		cats: []Catalog{cat("a", 0, content(etcd())), cat("b", 10, content(pkg("etcd").bundle("etcd.v0.1.0", "0.1.0").channel("alpha", catalog.ChannelEntry{Name: "etcd.v0.1.0"})))},
		want: &Decision{Package: "etcd", Bundle: "etcd.v0.1.0", Version: "0.1.0", Image: "quay.io/example/etcd.v0.1.0@sha256:0",
			Catalog: "b", Channels: []string{"alpha"}, Change: ChangeInstall},
	}, {
		name: "ambiguity: the same priority in several catalogs (all catalogs with a bundle are named)",
		ext:  ext("etcd"),
		cats: []Catalog{cat("c", 5, content(etcd())), cat("a", 5, content(etcd())), cat("b", 0, content(etcd()))},
		err:  `found bundles for package "etcd" in multiple catalogs with the same priority [a b c]`,
	}, {
		name: "ambiguity while upgrading",
		ext:  ext("etcd", installed("etcd.v0.9.2", "0.9.2"), channels("alpha")),
		cats: []Catalog{cat("a", 0, content(etcd())), cat("b", 0, content(etcd()))},
		err:  `error upgrading from currently installed version "0.9.2": found bundles for package "etcd" in channels [alpha] in multiple catalogs with the same priority [a b]`,
	}, {
		name: "the selector picks a catalog by its name label",
		ext:  ext("etcd", selector(map[string]string{MetadataNameLabel: "b"})),
		cats: []Catalog{cat("a", 0, content(etcd())), cat("b", 0, content(etcd()))},
		want: &Decision{Package: "etcd", Bundle: "etcd.v1.0.0", Version: "1.0.0", Image: "quay.io/example/etcd.v1.0.0@sha256:0",
			Catalog: "b", Channels: []string{"alpha"}, Change: ChangeInstall},
	}, {
		name: "an Unavailable catalog is left out",
		ext:  ext("etcd"),
		cats: []Catalog{cat("a", 0, content(etcd())), func() Catalog { c := cat("b", 0, content(etcd())); c.Unavailable = true; return c }()},
		want: &Decision{Package: "etcd", Bundle: "etcd.v1.0.0", Version: "1.0.0", Image: "quay.io/example/etcd.v1.0.0@sha256:0",
			Catalog: "a", Channels: []string{"alpha"}, Change: ChangeInstall},
	}, {
		name: "a deprecated bundle sorts after the others of its catalog",
		ext:  ext("etcd"), cats: []Catalog{cat("a", 0, content(etcd().deprecate("etcd.v1.0.0")))},
		want: &Decision{Package: "etcd", Bundle: "etcd.v0.9.4", Version: "0.9.4", Image: "quay.io/example/etcd.v0.9.4@sha256:0",
			Catalog: "a", Channels: []string{"alpha"}, Change: ChangeInstall},
	}, {
		name: "a non-deprecated candidate beats a deprecated one of a higher priority",
		ext:  ext("etcd", version("1.0.0")),
		cats: []Catalog{cat("a", 10, content(etcd().deprecate("etcd.v1.0.0"))), cat("b", 0, content(etcd()))},
		want: &Decision{Package: "etcd", Bundle: "etcd.v1.0.0", Version: "1.0.0", Image: "quay.io/example/etcd.v1.0.0@sha256:0",
			Catalog: "b", Channels: []string{"alpha"}, Change: ChangeInstall},
	}, {
		name: "a bundle with a dependency is refused",
		ext:  ext("a"),
		cats: []Catalog{cat("a", 0, content(pkg("a").bundle("a.v1.0.0", "1.0.0", dep).channel("stable", catalog.ChannelEntry{Name: "a.v1.0.0"})))},
		err:  `validating bundle "a.v1.0.0": bundle "a.v1.0.0" has a dependency declared via property "olm.package.required" which is currently not supported`,
	}, {
		name: "releases in build metadata order bundles of one version",
		ext:  ext("r"),
		cats: []Catalog{cat("a", 0, content(pkg("r").bundle("r.v1.0.0-2", "1.0.0+2").bundle("r.v1.0.0-10", "1.0.0+10").bundle("r.v1.0.0", "1.0.0").
			channel("stable", catalog.ChannelEntry{Name: "r.v1.0.0"}, catalog.ChannelEntry{Name: "r.v1.0.0-2"}, catalog.ChannelEntry{Name: "r.v1.0.0-10"})))},
		want: &Decision{Package: "r", Bundle: "r.v1.0.0-10", Version: "1.0.0+10", Image: "quay.io/example/r.v1.0.0-10@sha256:0",
			Catalog: "a", Channels: []string{"stable"}, Change: ChangeInstall},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Resolve(tt.ext, tt.cats)
			if tt.err != "" {
				if err == nil {
					t.Fatalf("got %+v, want error %q", got, tt.err)
				}
				if err.Error() != tt.err {
					t.Fatalf("error:\n got %s\nwant %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// TestResolveStats: what each catalog held is reported, whatever the outcome.
func TestResolveStats(t *testing.T) {
	unavailable := cat("c", 0, content(etcd()))
	unavailable.Unavailable = true
	_, stats, err := Resolve(ext("etcd", version("0.9.x"), selector(map[string]string{"team": "x"})), []Catalog{
		cat("b", 3, content(etcd())), unavailable, func() Catalog { c := cat("a", 1, content(etcd())); c.Labels["team"] = "x"; return c }(),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []CatalogStat{
		{Name: "a", Priority: 1, PackageFound: true, TotalBundles: 4, MatchedBundles: 3, Best: "etcd.v0.9.4"},
		{Name: "b", Priority: 3, Excluded: ExcludedNotSelected},
		{Name: "c", Excluded: ExcludedUnavailable},
	}
	if d := cmp.Diff(want, stats); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// TestResolveCatalogError: a catalog whose content could not be read fails resolution with
// OLM v1's words (internal/operator-controller/resolve/catalog.go:86 and :166).
func TestResolveCatalogError(t *testing.T) {
	c := cat("a", 0, nil)
	c.Err = errString("catalog not unpacked")
	_, _, err := Resolve(ext("etcd"), []Catalog{c})
	want := `error walking catalogs: error getting package "etcd" from catalog "a": catalog not unpacked`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
