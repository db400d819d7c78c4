package subscription_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

// catalogOf is the registry as the CatalogSource controller would fill it: here one catalog
// read from an FBC stream, behind a real resolver.
type catalogOf struct{ r *resolve.Resolver }

func (c catalogOf) Resolver() (*resolve.Resolver, uint64) { return c.r, 1 }

// Loaded: the registry holds every catalog (this process loaded them).
func (c catalogOf) Loaded(client.ObjectKey) bool { return true }

// csvBundle is an FBC olm.bundle line whose CSV travels in an olm.bundle.object property,
// so that the InstallPlan gets steps (not a bundle lookup).
func csvBundle(pkg, name, version string) string {
	csv := map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"version": version,
			"installModes": []map[string]any{
				{"type": "OwnNamespace", "supported": true}, {"type": "SingleNamespace", "supported": true},
				{"type": "MultiNamespace", "supported": false}, {"type": "AllNamespaces", "supported": true},
			},
			"install": map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": []any{}}},
		},
	}
	raw, _ := json.Marshal(csv)
	props := []map[string]any{
		{"type": "olm.package", "value": map[string]any{"packageName": pkg, "version": version}},
		{"type": "olm.bundle.object", "value": map[string]any{"data": base64.StdEncoding.EncodeToString(raw)}},
	}
	line, _ := json.Marshal(map[string]any{"schema": "olm.bundle", "name": name, "package": pkg, "image": "example.com/" + name, "properties": props})
	return string(line)
}

// envCatalog: package p, channel stable: p.v1.0.0 → p.v1.1.0 → p.v1.2.0; package q: q.v1.0.0.
func envCatalog(t *testing.T, global string) catalogOf {
	lines := []string{
		`{"schema":"olm.package","name":"p","defaultChannel":"stable"}`,
		`{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"},{"name":"p.v1.2.0","replaces":"p.v1.1.0"}]}`,
		csvBundle("p", "p.v1.0.0", "1.0.0"), csvBundle("p", "p.v1.1.0", "1.1.0"), csvBundle("p", "p.v1.2.0", "1.2.0"),
		`{"schema":"olm.package","name":"q","defaultChannel":"stable"}`,
		`{"schema":"olm.channel","package":"q","name":"stable","entries":[{"name":"q.v1.0.0"}]}`,
		csvBundle("q", "q.v1.0.0", "1.0.0"),
	}
	c := catalog.ReadFBC(strings.NewReader(strings.Join(lines, "\n")), "catalog.json")
	if len(c.Problems) > 0 {
		t.Fatalf("fixture catalog: %v", c.Problems)
	}
	return catalogOf{resolve.New([]resolve.Catalog{{Name: "cat", Namespace: global, Content: c}}, resolve.Options{GlobalNamespace: global})}
}

// setup starts a manager running the Subscription controller alone, with a global catalog
// namespace holding a READY CatalogSource "cat", and returns a client and a fresh namespace
// for the test's Subscriptions.
func setup(t *testing.T, withGroup bool) (client.Client, string, string) {
	t.Helper()
	env := testenv.Get(t)
	global := olmtest.NewNamespace(t, env, "catalogs")
	ns := olmtest.NewNamespace(t, env, "operators")
	c := env.Client
	ctx := context.Background()
	cs := &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: global, Name: "cat"}, Spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: "example.com/cat:latest"}}
	if err := c.Create(ctx, cs); err != nil {
		t.Fatal(err)
	}
	cs.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{LastObservedState: v1alpha1.ConnectionStateReady}
	if err := c.Status().Update(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if withGroup {
		olmtest.OwnGroup(t, env, ns)
	}
	// The tests share one API server: what a test leaves would be resolved, copied and
	// intersected by the whole embedded OLM that later tests run.
	t.Cleanup(func() { clearNamespace(t, c, ns) })
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             olm.ControllerConfig(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := subscription.SetupWithManager(mgr, envCatalog(t, global), subscription.Options{GlobalCatalogNamespace: global}); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return c, ns, global
}

func newSub(ns, name, pkg, global string, opts ...func(*v1alpha1.Subscription)) *v1alpha1.Subscription {
	s := &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: global, Package: pkg, Channel: "stable"},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// clearNamespace deletes the Subscriptions, InstallPlans and CSVs of ns.
func clearNamespace(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range []client.Object{&v1alpha1.Subscription{}, &v1alpha1.InstallPlan{}, &v1alpha1.ClusterServiceVersion{}} {
		if err := c.DeleteAllOf(ctx, obj, client.InNamespace(ns)); err != nil {
			t.Errorf("clear %s: %v", ns, err)
		}
	}
}

func getSub(t *testing.T, c client.Client, ns, name string) *v1alpha1.Subscription {
	t.Helper()
	s := &v1alpha1.Subscription{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func plansOf(t *testing.T, c client.Client, ns string) []v1alpha1.InstallPlan {
	t.Helper()
	var l v1alpha1.InstallPlanList
	if err := c.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(l.Items, func(a, b v1alpha1.InstallPlan) int { return a.Spec.Generation - b.Spec.Generation })
	return l.Items
}

// TestSubscriptionCreatesItsOwnInstallPlan: two Subscriptions in one namespace, one
// Automatic and one Manual, each get an InstallPlan of their own, with their own approval;
// the Subscriptions point at them, UpgradePending, with healthy catalogs.
func TestSubscriptionCreatesItsOwnInstallPlan(t *testing.T) {
	c, ns, global := setup(t, true)
	ctx := context.Background()
	if err := c.Create(ctx, newSub(ns, "p", "p", global)); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, newSub(ns, "q", "q", global, func(s *v1alpha1.Subscription) { s.Spec.InstallPlanApproval = v1alpha1.ApprovalManual })); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "both Subscriptions reference a plan", func() error {
		for _, name := range []string{"p", "q"} {
			s := getSub(t, c, ns, name)
			if s.Status.State != v1alpha1.SubscriptionStateUpgradePending || s.Status.InstallPlanRef == nil {
				return fmt.Errorf("%s: state %q, ref %v", name, s.Status.State, s.Status.InstallPlanRef)
			}
		}
		return nil
	})
	plans := plansOf(t, c, ns)
	if len(plans) != 2 {
		t.Fatalf("%d plans, want one per Subscription", len(plans))
	}
	byCSV := map[string]v1alpha1.InstallPlan{}
	for _, ip := range plans {
		if len(ip.Spec.ClusterServiceVersionNames) != 1 {
			t.Fatalf("plan %s installs %v", ip.Name, ip.Spec.ClusterServiceVersionNames)
		}
		byCSV[ip.Spec.ClusterServiceVersionNames[0]] = ip
		if len(ip.Status.Plan) == 0 || ip.Status.Plan[0].Resource.Kind != v1alpha1.ClusterServiceVersionKind {
			t.Errorf("plan %s steps %+v", ip.Name, ip.Status.Plan)
		}
		if len(ip.OwnerReferences) != 1 {
			t.Errorf("plan %s owners %+v", ip.Name, ip.OwnerReferences)
		}
	}
	p, q := byCSV["p.v1.2.0"], byCSV["q.v1.0.0"]
	if p.Spec.Approval != v1alpha1.ApprovalAutomatic || !p.Spec.Approved || p.OwnerReferences[0].Name != "p" {
		t.Errorf("p's plan: %+v %+v", p.Spec, p.OwnerReferences)
	}
	if q.Spec.Approval != v1alpha1.ApprovalManual || q.Spec.Approved || q.OwnerReferences[0].Name != "q" {
		t.Errorf("q's plan: %+v %+v", q.Spec, q.OwnerReferences)
	}
	s := getSub(t, c, ns, "p")
	if s.Status.CurrentCSV != "p.v1.2.0" || s.Status.Install == nil || s.Status.Install.Name != p.Name || s.Status.InstallPlanGeneration != p.Spec.Generation {
		t.Errorf("p's status %+v", s.Status)
	}
	if got := cond(s, v1alpha1.SubscriptionCatalogSourcesUnhealthy); !strings.HasPrefix(got, "False/") {
		t.Errorf("CatalogSourcesUnhealthy %s", got)
	}

	// The CSV appears (the InstallPlan controller would create it): p is AtLatestKnown.
	csv := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p.v1.2.0", Annotations: map[string]string{
		resolve.PropertiesAnnotation: `{"properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.2.0"}}]}`,
	}}}
	csv.Spec.Version = "1.2.0"
	csv.Spec.InstallStrategy.StrategyName = "deployment"
	if err := c.Create(ctx, csv); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "p is at the latest known CSV", func() error {
		s := getSub(t, c, ns, "p")
		if s.Status.State != v1alpha1.SubscriptionStateAtLatest || s.Status.InstalledCSV != "p.v1.2.0" {
			return fmt.Errorf("state %q installed %q", s.Status.State, s.Status.InstalledCSV)
		}
		return nil
	})
	if n := len(plansOf(t, c, ns)); n != 2 {
		t.Errorf("%d plans after the install, want still 2", n)
	}
}

// TestPinnedSubscription: a pin installs the pinned CSV first and approves it.
func TestPinnedSubscription(t *testing.T) {
	c, ns, global := setup(t, true)
	if err := c.Create(context.Background(), newSub(ns, "p", "p", global, func(s *v1alpha1.Subscription) {
		s.Annotations = map[string]string{plans.PinnedCSVAnnotation: "p.v1.1.0"}
	})); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "the pinned CSV is planned", func() error {
		plans := plansOf(t, c, ns)
		if len(plans) != 1 {
			return fmt.Errorf("%d plans", len(plans))
		}
		ip := plans[0]
		if !slices.Equal(ip.Spec.ClusterServiceVersionNames, []string{"p.v1.1.0"}) || ip.Spec.Approval != v1alpha1.ApprovalManual || !ip.Spec.Approved {
			return fmt.Errorf("plan %+v", ip.Spec)
		}
		return nil
	})
}

// TestNoOperatorGroup: OLM stalls silently; olmsync says why on the Subscription, and goes
// on once the group exists.
func TestNoOperatorGroup(t *testing.T) {
	c, ns, global := setup(t, false)
	ctx := context.Background()
	if err := c.Create(ctx, newSub(ns, "p", "p", global)); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "ResolutionFailed names the missing group", func() error {
		s := getSub(t, c, ns, "p")
		if got, want := cond(s, v1alpha1.SubscriptionResolutionFailed), "True/ErrorPreventedResolution: expected 1 OperatorGroup in the namespace, found 0"; got != want {
			return fmt.Errorf("%s", got)
		}
		return nil
	})
	if n := len(plansOf(t, c, ns)); n != 0 {
		t.Fatalf("%d plans without an OperatorGroup", n)
	}
	olmtest.OwnGroup(t, testenv.Get(t), ns)
	olmtest.Eventually(t, "resolution goes on", func() error {
		s := getSub(t, c, ns, "p")
		if cond(s, v1alpha1.SubscriptionResolutionFailed) != "-" || s.Status.InstallPlanRef == nil {
			return fmt.Errorf("status %+v", s.Status)
		}
		return nil
	})
}

// TestResolutionFailed: a package the catalog does not have fails with OLM's reason and
// message; nothing is planned.
func TestResolutionFailed(t *testing.T) {
	c, ns, global := setup(t, true)
	if err := c.Create(context.Background(), newSub(ns, "nope", "nope", global)); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "ResolutionFailed", func() error {
		got := cond(getSub(t, c, ns, "nope"), v1alpha1.SubscriptionResolutionFailed)
		if !strings.HasPrefix(got, "True/ConstraintsNotSatisfiable: constraints not satisfiable:") || !strings.Contains(got, "no operators found in package nope") {
			return fmt.Errorf("%s", got)
		}
		return nil
	})
	if n := len(plansOf(t, c, ns)); n != 0 {
		t.Errorf("%d plans for a failed resolution", n)
	}
}

// TestDeletedPendingPlanIsRemade: deleting the plan of a Subscription that waits on it
// makes the controller resolve again and create a new one (OLM's way to retry).
func TestDeletedPendingPlanIsRemade(t *testing.T) {
	c, ns, global := setup(t, true)
	ctx := context.Background()
	if err := c.Create(ctx, newSub(ns, "q", "q", global, func(s *v1alpha1.Subscription) { s.Spec.InstallPlanApproval = v1alpha1.ApprovalManual })); err != nil {
		t.Fatal(err)
	}
	var first string
	olmtest.Eventually(t, "a plan", func() error {
		s := getSub(t, c, ns, "q")
		if s.Status.InstallPlanRef == nil {
			return fmt.Errorf("no plan yet")
		}
		first = s.Status.InstallPlanRef.Name
		return nil
	})
	ip := &v1alpha1.InstallPlan{}
	ip.Namespace, ip.Name = ns, first
	if err := c.Delete(ctx, ip); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "a new plan", func() error {
		s := getSub(t, c, ns, "q")
		if s.Status.InstallPlanRef == nil || s.Status.InstallPlanRef.Name == first {
			return fmt.Errorf("ref %v", s.Status.InstallPlanRef)
		}
		if s.Status.InstallPlanGeneration < 2 {
			return fmt.Errorf("generation %d", s.Status.InstallPlanGeneration)
		}
		return nil
	})
}
