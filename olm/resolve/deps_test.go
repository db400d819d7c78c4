package resolve_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
)

const apiX = "Widget.v1.example.com"

// app is package "app": one bundle, app.v1.0.0, that requires apiX.
func app() pkgB {
	return pkg("app", "stable", ch("stable", e("app.v1.0.0"))).requires("app.v1.0.0", apiX)
}

// provider is a package whose channel entries all provide apiX (name.v<version> each
// replacing the one before).
func provider(name string, versions ...string) pkgB {
	var entries []catalog.ChannelEntry
	prev := ""
	for _, v := range versions {
		n := name + ".v" + v
		if prev == "" {
			entries = append(entries, e(n))
		} else {
			entries = append(entries, e(n, replaces(prev)))
		}
		prev = n
	}
	return pkg(name, "stable", ch("stable", entries...)).each(func(p pkgB, b string) { p.provides(b, apiX) })
}

// chosenProvider resolves a Subscription to "app" from catalog "apps" and returns the
// bundle that satisfies its dependency.
func chosenProvider(t *testing.T, catalogs []resolve.Catalog, n resolve.Namespace) (resolve.Dependency, *resolve.Result) {
	t.Helper()
	n.Subscriptions = append([]v1alpha1.Subscription{sub("app", "app", "stable", "apps", "olm").get()}, n.Subscriptions...)
	res := resolveNS(t, catalogs, n)
	r := res.Subscriptions[0]
	if r.Resolution.Status != resolve.StatusResolved || len(r.Dependencies) != 1 {
		t.Fatalf("app: %+v, dependencies %+v", r.Resolution, r.Dependencies)
	}
	return r.Dependencies[0], res
}

func TestProviderPreference(t *testing.T) {
	catalogA := func(name, namespace string, priority int, pkgs ...pkgB) resolve.Catalog {
		return withPriority(cat(name, namespace, pkgs...), priority)
	}
	tests := []struct {
		name      string
		catalogs  []resolve.Catalog
		csvs      []v1alpha1.ClusterServiceVersion
		wantName  string
		wantSrc   *resolve.CatalogKey
		installed bool
	}{
		{
			name:     "an installed provider comes first",
			catalogs: []resolve.Catalog{cat("apps", "olm", app(), provider("x", "2.0.0"))},
			csvs:     []v1alpha1.ClusterServiceVersion{installed(provider("x", "1.0.0"), "x.v1.0.0")},
			wantName: "x.v1.0.0", installed: true,
		},
		{
			name:     "then the catalog of the bundle that has the dependency, whatever the priorities",
			catalogs: []resolve.Catalog{catalogA("apps", "olm", 0, app(), provider("x", "1.0.0")), catalogA("high", "olm", 100, provider("y", "9.0.0"))},
			wantName: "x.v1.0.0", wantSrc: key("apps", "olm"),
		},
		{
			name:     "then the higher spec.priority",
			catalogs: []resolve.Catalog{cat("apps", "olm", app()), catalogA("low", "olm", -1, provider("x", "1.0.0")), catalogA("high", "olm", 10, provider("y", "1.0.0"))},
			wantName: "y.v1.0.0", wantSrc: key("high", "olm"),
		},
		{
			name:     "then the namespace's own catalogs before the global ones",
			catalogs: []resolve.Catalog{cat("apps", "olm", app()), cat("aaa", "olm", provider("x", "1.0.0")), cat("zzz", "ns", provider("y", "1.0.0"))},
			wantName: "y.v1.0.0", wantSrc: key("zzz", "ns"),
		},
		{
			name:     "then by catalog name",
			catalogs: []resolve.Catalog{cat("apps", "olm", app()), cat("b-catalog", "olm", provider("x", "1.0.0")), cat("a-catalog", "olm", provider("y", "1.0.0"))},
			wantName: "y.v1.0.0", wantSrc: key("a-catalog", "olm"),
		},
		{
			name:     "in a channel, the head before older entries",
			catalogs: []resolve.Catalog{cat("apps", "olm", app(), provider("x", "1.0.0", "1.1.0", "1.2.0"))},
			wantName: "x.v1.2.0", wantSrc: key("apps", "olm"),
		},
		{
			name: "in a catalog, default channels before others, then by package name",
			catalogs: []resolve.Catalog{cat("apps", "olm", app(),
				pkg("x", "stable", ch("fast", e("x.v2.0.0")), ch("stable", e("x.v1.0.0"))).provides("x.v2.0.0", apiX).provides("x.v1.0.0", apiX),
				pkg("a", "main", ch("beta", e("a.v3.0.0")), ch("main", e("a.v1.0.0"))).provides("a.v3.0.0", apiX))},
			wantName: "x.v1.0.0", wantSrc: key("apps", "olm"),
		},
		{
			// OLM's e2e "an entry in the middle of a channel does not provide a required GVK".
			name: "an entry that does not provide the API is passed over",
			catalogs: []resolve.Catalog{cat("apps", "olm", app(),
				pkg("x", "stable", ch("stable", e("x.v1.0.0"), e("x.v2.0.0", replaces("x.v1.0.0")), e("x.v3.0.0", replaces("x.v2.0.0")))).provides("x.v1.0.0", apiX))},
			wantName: "x.v1.0.0", wantSrc: key("apps", "olm"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dep, res := chosenProvider(t, tt.catalogs, ns(nil, tt.csvs...))
			want := resolve.Dependency{RequiredBy: "app.v1.0.0", Requirement: "providing an API with group: example.com, version: v1, kind: Widget",
				Name: tt.wantName, Package: dep.Package, Channel: dep.Channel, Source: tt.wantSrc, Installed: tt.installed}
			if diff := cmp.Diff(want, dep); diff != "" {
				t.Errorf("dependency (-want +got):\n%s", diff)
			}
			wantBundles := 2
			if tt.installed {
				wantBundles = 1
			}
			if len(res.Bundles) != wantBundles {
				t.Errorf("bundles = %+v", res.Bundles)
			}
		})
	}
}

// olm.package.required picks the newest entry whose version is in the range (OLM: range
// ">=0.1.0 <1.0.0" over 0.1.0 <- 0.2.0 <- 1.0.0 picks 0.2.0).
func TestPackageRequirement(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"))).requiresPackage("a.v1.0.0", "c", ">=0.1.0 <1.0.0")
	c := pkg("c", "stable", ch("stable", e("c.v0.1.0"), e("c.v0.2.0", replaces("c.v0.1.0")), e("c.v1.0.0", replaces("c.v0.2.0"))))
	res := resolveNS(t, []resolve.Catalog{cat("cat", "olm", a, c)}, ns(subs(sub("a", "a", "stable", "cat", "olm"))))
	want := []resolve.Dependency{{RequiredBy: "a.v1.0.0", Requirement: "with package: c and with version in range: >=0.1.0 <1.0.0",
		Name: "c.v0.2.0", Package: "c", Channel: "stable", Source: key("cat", "olm")}}
	if diff := cmp.Diff(want, res.Subscriptions[0].Dependencies); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	// The dependency gets a Subscription named <package>-<channel>-<catalog>-<catalogNamespace>.
	wantGen := v1alpha1.Subscription{Spec: v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: "olm", Package: "c", Channel: "stable",
		StartingCSV: "c.v0.2.0", InstallPlanApproval: v1alpha1.ApprovalAutomatic}}
	wantGen.APIVersion, wantGen.Kind, wantGen.Namespace, wantGen.Name = "operators.coreos.com/v1alpha1", "Subscription", "ns", "c-stable-cat-olm"
	if diff := cmp.Diff([]v1alpha1.Subscription{wantGen}, res.Generated); diff != "" {
		t.Errorf("generated (-want +got):\n%s", diff)
	}
	if got := []string{res.Bundles[0].Name, res.Bundles[1].Name}; !cmp.Equal(got, []string{"a.v1.0.0", "c.v0.2.0"}) || res.Bundles[1].Subscription != "" {
		t.Errorf("bundles = %+v", res.Bundles)
	}
}

// An olm.package.required range blang/semver cannot parse is an error naming the bundle, not
// a silent mismatch.
func TestInvalidRangeNamesTheBundle(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"))).requiresPackage("a.v1.0.0", "c", "^1.0.0")
	res := resolveNS(t, []resolve.Catalog{cat("cat", "olm", a)}, ns(subs(sub("a", "a", "stable", "cat", "olm"))))
	want := resolve.Resolution{Status: resolve.StatusFailed, Reason: resolve.ReasonErrorPreventedResolution, Head: "a.v1.0.0",
		Message: `bundle a.v1.0.0 of package "a" in catalog olm/cat: olm.package.required c: invalid version range "^1.0.0": Could not parse Range "^1.0.0": Could not parse comparator "^" in "^1.0.0"`}
	if diff := cmp.Diff(want, res.Subscriptions[0].Resolution); diff != "" {
		t.Errorf("resolution (-want +got):\n%s", diff)
	}
}

// The invariants: one bundle per package and one provider per API in a namespace, and the
// first "OLM must never" rule: no set in which a required API has no provider.
func TestInvariants(t *testing.T) {
	p := pkg("p", "stable", ch("stable", e("p.v1.0.0"))).provides("p.v1.0.0", apiX)
	q := pkg("q", "stable", ch("stable", e("q.v1.0.0"))).provides("q.v1.0.0", apiX)
	two := pkg("two", "stable", ch("stable", e("two.v1.0.0")), ch("fast", e("two.v2.0.0")))
	self := pkg("self", "stable", ch("stable", e("self.v1.0.0"), e("self.v2.0.0", replaces("self.v1.0.0")))).
		provides("self.v1.0.0", "Thing.v1.example.com").requires("self.v2.0.0", "Thing.v1.example.com")
	catalogs := []resolve.Catalog{cat("c", "olm", p, q, two, self)}
	tests := []struct {
		name string
		n    resolve.Namespace
		want map[string]string // Subscription -> message
	}{
		{
			name: "two providers of one API",
			n:    ns(subs(sub("p", "p", "stable", "c", "olm"), sub("q", "q", "stable", "c", "olm"))),
			want: map[string]string{
				"p": "constraints not satisfiable: c/olm/stable/p.v1.0.0 and c/olm/stable/q.v1.0.0 provide Widget (example.com/v1), subscription p exists, subscription p requires c/olm/stable/p.v1.0.0, subscription q exists, subscription q requires c/olm/stable/q.v1.0.0",
				"q": "constraints not satisfiable: c/olm/stable/p.v1.0.0 and c/olm/stable/q.v1.0.0 provide Widget (example.com/v1), subscription p exists, subscription p requires c/olm/stable/p.v1.0.0, subscription q exists, subscription q requires c/olm/stable/q.v1.0.0",
			},
		},
		{
			name: "two Subscriptions to one package in different channels",
			n:    ns(subs(sub("s1", "two", "stable", "c", "olm"), sub("s2", "two", "fast", "c", "olm"))),
			want: map[string]string{
				"s1": "constraints not satisfiable: c/olm/fast/two.v2.0.0 and c/olm/stable/two.v1.0.0 originate from package two, subscription s1 exists, subscription s1 requires c/olm/stable/two.v1.0.0, subscription s2 exists, subscription s2 requires c/olm/fast/two.v2.0.0",
				"s2": "constraints not satisfiable: c/olm/fast/two.v2.0.0 and c/olm/stable/two.v1.0.0 originate from package two, subscription s1 exists, subscription s1 requires c/olm/stable/two.v1.0.0, subscription s2 exists, subscription s2 requires c/olm/fast/two.v2.0.0",
			},
		},
		{
			name: "an installed CSV no Subscription references must stay",
			n:    ns(subs(sub("q", "q", "stable", "c", "olm")), installed(p, "p.v1.0.0")),
			want: map[string]string{
				"q": "constraints not satisfiable: @existing/ns//p.v1.0.0 and c/olm/stable/q.v1.0.0 provide Widget (example.com/v1), clusterserviceversion p.v1.0.0 exists and is not referenced by a subscription, subscription q exists, subscription q requires c/olm/stable/q.v1.0.0",
			},
		},
		{
			// OLM's TestSolveOperators_PackageCannotSelfSatisfy.
			name: "a package cannot satisfy its own requirement with another of its bundles",
			n:    ns(subs(sub("self", "self", "stable", "c", "olm").starting("self.v2.0.0"))),
			want: map[string]string{
				"self": "constraints not satisfiable: bundle self.v2.0.0 requires an operator providing an API with group: example.com, version: v1, kind: Thing, c/olm/stable/self.v1.0.0 and c/olm/stable/self.v2.0.0 originate from package self, subscription self exists, subscription self requires c/olm/stable/self.v2.0.0",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resolveNS(t, catalogs, tt.n)
			for name, msg := range tt.want {
				got := res.Subscription(name).Resolution
				if got.Status != resolve.StatusFailed || got.Reason != resolve.ReasonConstraintsNotSatisfiable || got.Message != msg {
					t.Errorf("%s: %s %s\n got %q\nwant %q", name, got.Status, got.Reason, got.Message, msg)
				}
			}
			if len(res.Bundles) != 0 {
				t.Errorf("bundles = %+v, want none", res.Bundles)
			}
		})
	}
}

// A bundle carrying the legacy olm.deprecated property is never installed: a new
// Subscription gets the newest entry without it.
func TestDeprecatedBundleIsProhibited(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0")))).
		with("a.v2.0.0", prop(catalog.PropertyDeprecated, map[string]any{}))
	res := resolveNS(t, []resolve.Catalog{cat("c", "olm", a)}, ns(subs(sub("a", "a", "stable", "c", "olm"))))
	if got := res.Subscriptions[0].Resolution; got.Status != resolve.StatusResolved || got.Next != "a.v1.0.0" {
		t.Errorf("resolution = %+v, want a.v1.0.0", got)
	}
}

// olm.constraint: any, all, not, a failure message, and CEL over the candidate's properties.
func TestConstraints(t *testing.T) {
	constraint := func(v any) catalog.Property { return prop(catalog.PropertyConstraint, v) }
	// x.v1.0.0 carries its manifests as olm.bundle.object and olm.csv.metadata, which OLM's
	// registry leaves out of the properties its resolver reads.
	x := provider("x", "1.0.0", "2.0.0").with("x.v1.0.0",
		prop(catalog.PropertyBundleObject, map[string]string{"data": "e30="}),
		prop(catalog.PropertyCSVMetadata, map[string]string{"displayName": "X"}))
	y := pkg("y", "stable", ch("stable", e("y.v1.0.0"))).with("y.v1.0.0", prop(catalog.PropertyLabel, map[string]string{"label": "fast"}))
	tests := []struct {
		name       string
		constraint catalog.Property
		want       string // the provider chosen; empty when none
		msg        string
	}{
		{"any of two packages", constraint(map[string]any{"any": map[string]any{"constraints": []any{
			map[string]any{"package": map[string]string{"packageName": "nope", "versionRange": ">=1.0.0"}},
			map[string]any{"package": map[string]string{"packageName": "x", "versionRange": "<2.0.0"}},
		}}}), "x.v1.0.0", ""},
		{"all of an API and a version", constraint(map[string]any{"all": map[string]any{"constraints": []any{
			map[string]any{"gvk": map[string]string{"group": "example.com", "version": "v1", "kind": "Widget"}},
			map[string]any{"package": map[string]string{"packageName": "x", "versionRange": ">=2.0.0"}},
		}}}), "x.v2.0.0", ""},
		{"CEL over the properties", constraint(map[string]any{"cel": map[string]string{
			"rule": `properties.exists(p, p.type == "olm.package" && p.value.packageName == "x" && semver_compare(p.value.version, "1.5.0") < 0)`}}), "x.v1.0.0", ""},
		{"CEL sees the properties OLM's registry serves", constraint(map[string]any{"cel": map[string]string{
			"rule": `properties.exists(p, p.type == "olm.package" && p.value.packageName == "x" && p.value.version == "1.0.0") && !properties.exists(p, p.type == "olm.bundle.object" || p.type == "olm.csv.metadata")`}}), "x.v1.0.0", ""},
		{"a label", prop(catalog.PropertyLabelRequired, map[string]string{"label": "fast"}), "y.v1.0.0", ""},
		{"nothing matches: the failure message explains", constraint(map[string]any{"failureMessage": "needs x 3", "package": map[string]string{"packageName": "x", "versionRange": ">=3.0.0"}}), "",
			"constraints not satisfiable: bundle a.v1.0.0 requires an operator with package: x and with version in range: >=3.0.0 (needs x 3), subscription a exists, subscription a requires c/olm/stable/a.v1.0.0"},
		// olmsync's wording of compound constraints (docs/olm.md, "olm.constraint wording").
		{"nothing matches all of", constraint(map[string]any{"all": map[string]any{"constraints": []any{
			map[string]any{"gvk": map[string]string{"group": "example.com", "version": "v1", "kind": "Widget"}},
			map[string]any{"package": map[string]string{"packageName": "x", "versionRange": ">=3.0.0"}},
		}}}), "",
			"constraints not satisfiable: bundle a.v1.0.0 requires an operator with all of: providing an API with group: example.com, version: v1, kind: Widget and with package: x and with version in range: >=3.0.0, subscription a exists, subscription a requires c/olm/stable/a.v1.0.0"},
		{"nothing matches any of", constraint(map[string]any{"any": map[string]any{"constraints": []any{
			map[string]any{"package": map[string]string{"packageName": "nope", "versionRange": ">=1.0.0"}},
			map[string]any{"package": map[string]string{"packageName": "x", "versionRange": ">=3.0.0"}},
		}}}), "",
			"constraints not satisfiable: bundle a.v1.0.0 requires an operator with any of: with package: nope and with version in range: >=1.0.0 or with package: x and with version in range: >=3.0.0, subscription a exists, subscription a requires c/olm/stable/a.v1.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := pkg("a", "stable", ch("stable", e("a.v1.0.0"))).with("a.v1.0.0", tt.constraint)
			res := resolveNS(t, []resolve.Catalog{cat("c", "olm", a, x, y)}, ns(subs(sub("a", "a", "stable", "c", "olm"))))
			r := res.Subscriptions[0]
			if tt.want == "" {
				if r.Resolution.Status != resolve.StatusFailed || r.Resolution.Message != tt.msg {
					t.Errorf("resolution = %s %q\nwant Failed %q", r.Resolution.Status, r.Resolution.Message, tt.msg)
				}
				return
			}
			if len(r.Dependencies) != 1 || r.Dependencies[0].Name != tt.want {
				t.Errorf("dependencies = %+v, want %s (%s)", r.Dependencies, tt.want, r.Resolution.Message)
			}
		})
	}
}

// A dependency's dependencies are resolved too, breadth first, and listed for the
// Subscription.
func TestTransitiveDependencies(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"))).requires("a.v1.0.0", apiX)
	x := provider("x", "1.0.0").requires("x.v1.0.0", "Gadget.v1.example.com")
	g := pkg("g", "stable", ch("stable", e("g.v1.0.0"))).provides("g.v1.0.0", "Gadget.v1.example.com")
	res := resolveNS(t, []resolve.Catalog{cat("c", "olm", a, x, g)}, ns(subs(sub("a", "a", "stable", "c", "olm"))))
	want := []resolve.Dependency{
		{RequiredBy: "a.v1.0.0", Requirement: "providing an API with group: example.com, version: v1, kind: Widget", Name: "x.v1.0.0", Package: "x", Channel: "stable", Source: key("c", "olm")},
		{RequiredBy: "x.v1.0.0", Requirement: "providing an API with group: example.com, version: v1, kind: Gadget", Name: "g.v1.0.0", Package: "g", Channel: "stable", Source: key("c", "olm")},
	}
	if diff := cmp.Diff(want, res.Subscriptions[0].Dependencies); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if len(res.Generated) != 2 || res.Generated[0].Name != "x-stable-c-olm" || res.Generated[1].Name != "g-stable-c-olm" {
		t.Errorf("generated = %+v", res.Generated)
	}
}

// An installed CSV without the properties annotation: its package comes from the
// Subscription whose installedCSV names it, its APIs from its owned and required CRDs.
func TestInstalledCSVWithoutProperties(t *testing.T) {
	a := pkg("a", "stable", ch("stable", e("a.v1.0.0"), e("a.v2.0.0", replaces("a.v1.0.0")))).provides("a.v2.0.0", apiX)
	csv := v1alpha1.ClusterServiceVersion{}
	csv.Name, csv.Namespace, csv.Spec.Version = "a.v1.0.0", "ns", "1.0.0"
	csv.Spec.CustomResourceDefinitions.Owned = []v1alpha1.CRDDescription{{Name: "widgets.example.com", Version: "v1", Kind: "Widget"}}
	res := resolveNS(t, []resolve.Catalog{cat("c", "olm", a)}, ns(subs(sub("a", "a", "stable", "c", "olm").at("a.v1.0.0")), csv))
	if got := res.Subscriptions[0].Resolution; got.Status != resolve.StatusResolved || got.Next != "a.v2.0.0" || got.Replaces != "a.v1.0.0" {
		t.Errorf("resolution = %+v", got)
	}
	bad := csv.DeepCopy()
	bad.Spec.CustomResourceDefinitions.Owned[0].Name = "widgets"
	res = resolveNS(t, []resolve.Catalog{cat("c", "olm", a)}, ns(subs(sub("a", "a", "stable", "c", "olm").at("a.v1.0.0")), *bad))
	if got := res.Subscriptions[0].Resolution; got.Reason != resolve.ReasonErrorPreventedResolution || got.Message != "error parsing crd name: widgets" {
		t.Errorf("resolution = %+v", got)
	}
	// Copied CSVs are not the namespace's own: they neither provide nor stay.
	copied := installed(provider("x", "1.0.0"), "x.v1.0.0")
	copied.Labels = map[string]string{v1alpha1.CopiedLabelKey: "operators"}
	res = resolveNS(t, []resolve.Catalog{cat("c", "olm", app(), provider("y", "1.0.0"))}, ns(subs(sub("app", "app", "stable", "c", "olm")), copied))
	if deps := res.Subscriptions[0].Dependencies; len(deps) != 1 || deps[0].Name != "y.v1.0.0" {
		t.Errorf("a copied CSV counted as a provider: %+v", deps)
	}
}
