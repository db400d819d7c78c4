package resolve_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/crdupgrade"
	"github.com/olmsync/olmsync/olm/resolve"
)

func loadShared(tb testing.TB, rel string) *catalog.Catalog {
	tb.Helper()
	c, err := catalog.LoadPath(shareddata.Path(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func hasDependencies(b *catalog.Bundle) bool {
	return slices.ContainsFunc(b.Properties, func(p catalog.Property) bool {
		switch p.Type {
		case catalog.PropertyGVKRequired, catalog.PropertyPackageRequired, catalog.PropertyLabelRequired, catalog.PropertyConstraint:
			return true
		}
		return false
	})
}

// TestResolveEveryCommunityPackage subscribes, in an empty namespace, to the default channel
// of every package of the real community catalog (333 packages, 7,022 bundles) and checks
// each result against what the catalog says on its own: a default channel that cannot be
// ordered fails with exactly the ordering error; one that can, none of whose entries has
// dependencies, installs its head; the others are checked one by one (OLM builds the
// dependencies of every candidate, older entries included, before it solves).
func TestResolveEveryCommunityPackage(t *testing.T) {
	c := loadShared(t, "data/catalogs/community-operators/catalog.json")
	if len(c.Packages) != 333 {
		t.Fatalf("the community catalog has %d packages, its README says 333", len(c.Packages))
	}
	r := resolve.New([]resolve.Catalog{{Name: "community-operators", Namespace: "olm", Content: c}}, resolve.Options{GlobalNamespace: "olm"})
	source := resolve.CatalogKey{Name: "community-operators", Namespace: "olm"}
	counts := map[string]int{}
	withDeps := map[string]resolve.SubscriptionResult{}
	for _, p := range c.Packages {
		res := r.Resolve(ns(subs(sub("s", p.Name, p.DefaultChannel, "community-operators", "olm"))))
		got := res.Subscriptions[0]
		counts[string(got.Resolution.Status)+" "+got.Resolution.Reason]++
		if got.Resolution.Status == resolve.StatusFailed && got.Resolution.Message == "" {
			t.Errorf("%s: failed without a message", p.Name)
		}
		ch := p.Channel(p.DefaultChannel)
		if ch == nil {
			if got.Resolution.Status != resolve.StatusFailed {
				t.Errorf("%s: no default channel %q, yet %+v", p.Name, p.DefaultChannel, got.Resolution)
			}
			continue
		}
		order, err := ch.Order()
		if err != nil {
			want := resolve.Resolution{Status: resolve.StatusFailed, Reason: resolve.ReasonErrorPreventedResolution, Message: err.Error()}
			if diff := cmp.Diff(want, got.Resolution); diff != "" {
				t.Errorf("%s: (-want +got):\n%s", p.Name, diff)
			}
			continue
		}
		head := p.Bundle(order[0].Name)
		if slices.ContainsFunc(order, func(e catalog.ChannelEntry) bool { return hasDependencies(p.Bundle(e.Name)) }) {
			withDeps[p.Name] = got
			continue
		}
		want := resolve.Resolution{Status: resolve.StatusResolved, Next: head.Name, NextSource: &source, Head: head.Name, Path: []string{head.Name}, Message: head.Name + " is installed"}
		if diff := cmp.Diff(want, got.Resolution); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", p.Name, diff)
			continue
		}
		// The catalog carries no manifests: the plan is one bundle lookup for the head's image.
		plan, err := resolve.NewPlan(res)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Steps) != 0 || len(plan.BundleLookups) != 1 || plan.BundleLookups[0].Path != head.Image || plan.BundleLookups[0].Identifier != head.Name {
			t.Errorf("%s: plan %+v", p.Name, plan)
		}
	}
	t.Logf("default channel heads of %d packages: %v; %d orderable default channels have entries with dependencies", len(c.Packages), counts, len(withDeps))

	// The channels with dependencies, one by one.
	wantDeps := map[string]string{
		// Each needs a provider whose channel cannot be ordered: OLM stops with that error.
		"alloydb-omni-operator": `ErrorPreventedResolution: ... in channel "stable" of package "cert-manager"`,
		"kubedb-installer":      `ErrorPreventedResolution: ... in channel "stable" of package "cert-manager"`,
		"dbaas-operator":        `ErrorPreventedResolution: ... in channel "alpha" of package "ack-rds-controller"`,
		// The head has no dependency, but an older entry of the channel needs infinispan.
		"kogito-operator":  `ErrorPreventedResolution: ... in channel "preview" of package "infinispan"`,
		"mercury-operator": `ErrorPreventedResolution: ... of package "camel-k"`,
		// Resolved with their providers.
		"awss3-operator-registry": "Resolved",
		"lib-bucket-provisioner":  "Resolved",
		// The head needs nothing; an older entry's dependency resolves.
		"silicom-sts-operator": "Resolved-head",
		// No provider of NodeFeatureDiscovery (nfd.openshift.io) in the catalog.
		"special-resource-operator": "ConstraintsNotSatisfiable",
	}
	for name, got := range withDeps {
		want, ok := wantDeps[name]
		if !ok {
			t.Errorf("%s: unexpected channel with dependencies: %+v", name, got.Resolution)
			continue
		}
		switch want {
		case "Resolved":
			if got.Resolution.Status != resolve.StatusResolved || len(got.Dependencies) == 0 {
				t.Errorf("%s: %+v with dependencies %+v", name, got.Resolution, got.Dependencies)
			}
		case "Resolved-head":
			if got.Resolution.Status != resolve.StatusResolved || got.Resolution.Next != got.Resolution.Head {
				t.Errorf("%s: %+v", name, got.Resolution)
			}
		case "ConstraintsNotSatisfiable":
			if got.Resolution.Reason != resolve.ReasonConstraintsNotSatisfiable {
				t.Errorf("%s: %+v", name, got.Resolution)
			}
		default:
			if got.Resolution.Reason != resolve.ReasonErrorPreventedResolution {
				t.Errorf("%s: %+v, want %s", name, got.Resolution, want)
			}
		}
	}
	if len(withDeps) != len(wantDeps) {
		t.Errorf("%d channels with dependencies, want %d", len(withDeps), len(wantDeps))
	}
}

// TestResolveRealBundles resolves the real bundle directories, which carry their CSVs and
// CRDs: mercury-operator 1.0.2 needs camel-k 1.9.0 and strimzi-kafka-operator 0.28.0
// (dependencies.yaml), both in the sample; the InstallPlan installs all three, with a
// generated Subscription for each dependency, and every CRD step decodes into a v1 CRD.
func TestResolveRealBundles(t *testing.T) {
	c := loadShared(t, "data/catalogs/community-operators-bundles/operators")
	r := resolve.New([]resolve.Catalog{{Name: "community", Namespace: "olm", Content: c}}, resolve.Options{GlobalNamespace: "olm"})
	res := r.Resolve(ns(subs(sub("mercury", "mercury-operator", "stable", "community", "olm"))))
	got := res.Subscriptions[0]
	if got.Resolution.Next != "mercury-operator.v1.0.2" {
		t.Fatalf("mercury: %+v", got.Resolution)
	}
	var deps []string
	for _, d := range got.Dependencies {
		deps = append(deps, d.Requirement+" -> "+d.Name)
	}
	want := []string{
		"with package: camel-k and with version in range: 1.9.0 -> camel-k-operator.v1.9.0",
		"with package: strimzi-kafka-operator and with version in range: 0.28.0 -> strimzi-cluster-operator.v0.28.0",
	}
	for _, w := range want {
		if !slices.Contains(deps, w) {
			t.Errorf("dependencies %v lack %q", deps, w)
		}
	}
	plan, err := resolve.NewPlan(res)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(plan.CSVNames, []string{"mercury-operator.v1.0.2", "strimzi-cluster-operator.v0.28.0", "camel-k-operator.v1.9.0"}) {
		t.Errorf("CSV names = %v", plan.CSVNames)
	}
	kinds := map[string]int{}
	for i, s := range plan.Steps {
		kinds[s.Resource.Kind]++
		if i > 0 && s.Resource.Kind == "ClusterServiceVersion" && plan.Steps[i-1].Resource.Kind != "ClusterServiceVersion" {
			t.Errorf("step %d: a CSV after a %s", i, plan.Steps[i-1].Resource.Kind)
		}
		switch s.Resource.Kind {
		case "CustomResourceDefinition":
			if _, err := crdupgrade.Decode([]byte(s.Resource.Manifest)); err != nil {
				t.Errorf("CRD step %s: %v", s.Resource.Name, err)
			}
		case "Subscription":
			var sub struct {
				Spec struct{ StartingCSV string } `json:"spec"`
			}
			if err := json.Unmarshal([]byte(s.Resource.Manifest), &sub); err != nil || sub.Spec.StartingCSV != s.Resolving {
				t.Errorf("subscription step %s: startingCSV %q, resolving %s (%v)", s.Resource.Name, sub.Spec.StartingCSV, s.Resolving, err)
			}
		}
	}
	if kinds["ClusterServiceVersion"] != 3 || kinds["Subscription"] != 2 || kinds["CustomResourceDefinition"] < 10 || kinds["ServiceAccount"] == 0 {
		t.Errorf("step kinds = %v", kinds)
	}

	// dbaas-operator needs ack-rds-controller, which the sample does not have.
	res = r.Resolve(ns(subs(sub("dbaas", "dbaas-operator", "stable", "community", "olm"))))
	wantMsg := "constraints not satisfiable: bundle dbaas-operator.v0.5.0 requires an operator with package: ack-rds-controller and with version in range: >=0.0.27 <=0.1.3, subscription dbaas exists, subscription dbaas requires community/olm/stable/dbaas-operator.v0.5.0"
	if got := res.Subscriptions[0].Resolution; got.Message != wantMsg {
		t.Errorf("dbaas:\n got %q\nwant %q", got.Message, wantMsg)
	}
}

// TestResolveRealPackageManifest: the real etcd package manifest (three channels, default
// singlenamespace-alpha) installs etcdoperator.v0.9.4 and upgrades 0.9.2 to it.
func TestResolveRealPackageManifest(t *testing.T) {
	c := loadShared(t, "data/catalogs/community-operators-bundles/package-manifests/etcd")
	etcd := pkgB{c.Package("etcd")}
	r := resolve.New([]resolve.Catalog{{Name: "upstream", Namespace: "olm", Content: c}}, resolve.Options{GlobalNamespace: "olm"})
	got := r.Resolve(ns(subs(sub("etcd", "etcd", "", "upstream", "olm")))).Subscriptions[0]
	if got.Channel != "singlenamespace-alpha" || got.Resolution.Next != "etcdoperator.v0.9.4" {
		t.Errorf("new: channel %s, %+v", got.Channel, got.Resolution)
	}
	got = r.Resolve(ns(subs(sub("etcd", "etcd", "singlenamespace-alpha", "upstream", "olm").at("etcdoperator.v0.9.2")), installed(etcd, "etcdoperator.v0.9.2"))).Subscriptions[0]
	if got.Resolution.Next != "etcdoperator.v0.9.4" || got.Resolution.Replaces != "etcdoperator.v0.9.2" {
		t.Errorf("upgrade: %+v", got.Resolution)
	}
}
