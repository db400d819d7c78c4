package resolve_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
)

// Small builders for table tests. A bundle's version is the part of its name after the last
// ".v" ("etcdoperator.v0.9.2" is 0.9.2). APIs are written Kind.version.group.

// e is a channel entry: e("a.v2", replaces("a.v1"), skips("a.v1.5"), skipRange(">=1.0.0 <2.0.0")).
func e(name string, opts ...func(*catalog.ChannelEntry)) catalog.ChannelEntry {
	ce := catalog.ChannelEntry{Name: name}
	for _, o := range opts {
		o(&ce)
	}
	return ce
}

func replaces(name string) func(*catalog.ChannelEntry) {
	return func(ce *catalog.ChannelEntry) { ce.Replaces = name }
}

func skips(names ...string) func(*catalog.ChannelEntry) {
	return func(ce *catalog.ChannelEntry) { ce.Skips = names }
}

func skipRange(r string) func(*catalog.ChannelEntry) {
	return func(ce *catalog.ChannelEntry) { ce.SkipRange = r }
}

func ch(name string, entries ...catalog.ChannelEntry) *catalog.Channel {
	return &catalog.Channel{Name: name, Entries: entries}
}

// pkgB builds a package whose bundles are its channels' entries.
type pkgB struct{ *catalog.Package }

func pkg(name, defaultChannel string, chans ...*catalog.Channel) pkgB {
	p := &catalog.Package{Name: name, DefaultChannel: defaultChannel}
	for _, c := range chans {
		c.Package = name
		p.Channels = append(p.Channels, c)
		for _, ce := range c.Entries {
			if p.Bundle(ce.Name) == nil {
				p.Bundles = append(p.Bundles, newBundle(name, ce.Name))
			}
		}
	}
	return pkgB{p}
}

func versionOf(name string) string {
	if i := strings.LastIndex(name, ".v"); i >= 0 {
		return name[i+2:]
	}
	return "0.0.1"
}

func newBundle(pkgName, name string) *catalog.Bundle {
	version := versionOf(name)
	b := &catalog.Bundle{Name: name, Package: pkgName, Image: "quay.io/example/" + name,
		Properties: []catalog.Property{prop(catalog.PropertyPackage, catalog.PackageProperty{PackageName: pkgName, Version: version})}}
	if v, err := semver.Parse(version); err == nil {
		b.Version = v
	}
	return b
}

func prop(typ string, v any) catalog.Property {
	p, err := catalog.NewProperty(typ, v)
	if err != nil {
		panic(err)
	}
	return p
}

func gvk(api string) catalog.GVK {
	kind, rest, _ := strings.Cut(api, ".")
	version, group, _ := strings.Cut(rest, ".")
	return catalog.GVK{Group: group, Kind: kind, Version: version}
}

func (p pkgB) with(bundle string, props ...catalog.Property) pkgB {
	b := p.Bundle(bundle)
	if b == nil {
		panic("no bundle " + bundle)
	}
	b.Properties = append(b.Properties, props...)
	return p
}

func (p pkgB) provides(bundle string, apis ...string) pkgB {
	for _, a := range apis {
		p.with(bundle, prop(catalog.PropertyGVK, gvk(a)))
	}
	return p
}

func (p pkgB) requires(bundle string, apis ...string) pkgB {
	for _, a := range apis {
		p.with(bundle, prop(catalog.PropertyGVKRequired, gvk(a)))
	}
	return p
}

func (p pkgB) requiresPackage(bundle, pkgName, versionRange string) pkgB {
	return p.with(bundle, prop(catalog.PropertyPackageRequired, catalog.PackageRequirement{PackageName: pkgName, VersionRange: versionRange}))
}

// each applies f to every bundle of the package.
func (p pkgB) each(f func(p pkgB, bundle string)) pkgB {
	for _, b := range p.Bundles {
		f(p, b.Name)
	}
	return p
}

func (p pkgB) deprecate(schema, name, message string) pkgB {
	p.Deprecations = append(p.Deprecations, catalog.Deprecation{Reference: catalog.DeprecationReference{Schema: schema, Name: name}, Message: message})
	return p
}

func content(pkgs ...pkgB) *catalog.Catalog {
	c := &catalog.Catalog{Source: catalog.Source{Format: catalog.FormatFBC, Ref: "test"}}
	for _, p := range pkgs {
		c.Packages = append(c.Packages, p.Package)
	}
	c.Sort()
	return c
}

func cat(name, namespace string, pkgs ...pkgB) resolve.Catalog {
	return resolve.Catalog{Name: name, Namespace: namespace, Content: content(pkgs...)}
}

func withPriority(c resolve.Catalog, priority int) resolve.Catalog { c.Priority = priority; return c }

// installed is the CSV of a catalog bundle as OLM installs it: the bundle's properties in
// the properties annotation.
func installed(p pkgB, bundle string) v1alpha1.ClusterServiceVersion {
	b := p.Bundle(bundle)
	if b == nil {
		panic("no bundle " + bundle)
	}
	return installedCSV(bundle, versionOf(bundle), b.Properties...)
}

// installedCSV is a CSV in the namespace with the given properties annotation.
func installedCSV(name, version string, props ...catalog.Property) v1alpha1.ClusterServiceVersion {
	csv := v1alpha1.ClusterServiceVersion{}
	csv.Name, csv.Namespace = name, "ns"
	csv.Spec.Version = v1alpha1.OperatorVersion(version)
	data, err := json.Marshal(map[string]any{"properties": props})
	if err != nil {
		panic(err)
	}
	csv.Annotations = map[string]string{resolve.PropertiesAnnotation: string(data)}
	return csv
}

type subB struct{ v1alpha1.Subscription }

// sub is a Subscription in namespace "ns" to package pkg in catalog source/sourceNamespace.
func sub(name, pkgName, channel, source, sourceNamespace string) subB {
	s := v1alpha1.Subscription{Spec: v1alpha1.SubscriptionSpec{Package: pkgName, Channel: channel, CatalogSource: source, CatalogSourceNamespace: sourceNamespace}}
	s.Name, s.Namespace = name, "ns"
	return subB{s}
}

func (s subB) at(csv string) subB         { s.Status.InstalledCSV = csv; return s }
func (s subB) starting(csv string) subB   { s.Spec.StartingCSV = csv; return s }
func (s subB) manual() subB               { s.Spec.InstallPlanApproval = v1alpha1.ApprovalManual; return s }
func (s subB) get() v1alpha1.Subscription { return s.Subscription }

func ns(subs []subB, csvs ...v1alpha1.ClusterServiceVersion) resolve.Namespace {
	n := resolve.Namespace{Name: "ns", CSVs: csvs}
	for _, s := range subs {
		n.Subscriptions = append(n.Subscriptions, s.Subscription)
	}
	return n
}

func subs(s ...subB) []subB { return s }

// resolveOne resolves the namespace against the catalogs (global namespace "olm") and
// returns the result of its first Subscription.
func resolveNS(t *testing.T, catalogs []resolve.Catalog, n resolve.Namespace) *resolve.Result {
	t.Helper()
	return resolve.New(catalogs, resolve.Options{GlobalNamespace: "olm"}).Resolve(n)
}
