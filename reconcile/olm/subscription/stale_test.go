package subscription_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

// fixtureCatalogs serves fixtureFBC as the catalog olm/cat.
type fixtureCatalogs struct{ r *resolve.Resolver }

func (c fixtureCatalogs) Resolver() (*resolve.Resolver, uint64) { return c.r, 1 }

// Loaded: the registry holds every catalog (this process loaded them).
func (c fixtureCatalogs) Loaded(client.ObjectKey) bool { return true }

// TestNoSecondPlanFromAStaleView: a pass reads the namespace's InstallPlans and CSVs from
// the cache. The pass after the one that made a Subscription's InstallPlan runs before the
// cache shows the plan (the cache holds the namespace as it was before): it must not make a
// second plan for the same resolution, nor write anything; once the cache has caught up, the
// Subscription still refers to the one plan. The Subscriptions, plans and CSVs are never
// listed in full from the API server: only the Subscriptions' metadata, by a pass that acts.
func TestNoSecondPlanFromAStaleView(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "stale-view")
	olmtest.OwnGroup(t, env, ns)
	olmtest.Create(t, env, &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "d"},
		Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: "olm", Package: "d", Channel: "stable"},
	})
	c := catalog.ReadFBC(strings.NewReader(fixtureFBC), "catalog.json")
	catalogs := fixtureCatalogs{resolve.New([]resolve.Catalog{{Name: "cat", Namespace: "olm", Content: c}}, resolve.Options{GlobalNamespace: "olm"})}
	lagging := &olmtest.StaleCache{Client: env.Client}
	reads := &olmtest.APIReads{Reader: env.Client}
	r := &subscription.Reconciler{Client: lagging, APIReader: reads, Catalogs: catalogs,
		Recorder: events.NewFakeRecorder(100), Options: subscription.Options{GlobalCatalogNamespace: "olm"}}
	pass := func() (*v1alpha1.Subscription, []v1alpha1.InstallPlan) {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns}}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		s := &v1alpha1.Subscription{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "d"}, s); err != nil {
			t.Fatal(err)
		}
		var plans v1alpha1.InstallPlanList
		if err := env.Client.List(ctx, &plans, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return s, plans.Items
	}

	first, plans := pass()
	if len(plans) != 1 || first.Status.InstallPlanRef == nil || first.Status.InstallPlanRef.Name != plans[0].Name {
		t.Fatalf("first pass: %d plans, reference %+v; want one plan, referred to", len(plans), first.Status.InstallPlanRef)
	}

	lagging.StaleLists = []client.ObjectList{&v1alpha1.InstallPlanList{}, &v1alpha1.ClusterServiceVersionList{}}
	second, plans := pass()
	if len(plans) != 1 {
		t.Errorf("%d plans after a pass from the view before the first plan, want 1", len(plans))
	}
	if diff := cmp.Diff(first.Status, second.Status); diff != "" {
		t.Errorf("the pass from the stale view wrote the status (-first +after):\n%s", diff)
	}

	lagging.StaleLists = nil
	third, plans := pass()
	if len(plans) != 1 || third.Status.InstallPlanRef == nil || third.Status.InstallPlanRef.Name != plans[0].Name {
		t.Errorf("once the cache caught up: %d plans, reference %+v; want the one plan", len(plans), third.Status.InstallPlanRef)
	}
	for _, list := range []client.ObjectList{&v1alpha1.SubscriptionList{}, &v1alpha1.InstallPlanList{}, &v1alpha1.ClusterServiceVersionList{}} {
		if n := reads.Of(list); n > 0 {
			t.Errorf("%d lists of %T from the API server, want none (the cache)", n, list)
		}
	}
}

// TestNoSubscriptionsNoCollection: a namespace without Subscriptions holds more InstallPlans
// than a namespace keeps (written by hand, or left by deleted Subscriptions): a pass over it
// deletes none of them.
func TestNoSubscriptionsNoCollection(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "no-subs")
	olmtest.OwnGroup(t, env, ns)
	for i := range subscription.MaxInstallPlans + 1 {
		olmtest.Create(t, env, &v1alpha1.InstallPlan{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("by-hand-%d", i)},
			Spec: v1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{"d.v1.0.0"}, Approval: v1alpha1.ApprovalManual,
				Generation: i + 1},
		})
	}
	r := &subscription.Reconciler{Client: env.Client, APIReader: env.Client, Catalogs: fixtureCatalogs{},
		Recorder: events.NewFakeRecorder(100)}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns}}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	var plans v1alpha1.InstallPlanList
	if err := env.Client.List(ctx, &plans, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(plans.Items) != subscription.MaxInstallPlans+1 {
		t.Errorf("%d plans left of %d, want all of them", len(plans.Items), subscription.MaxInstallPlans+1)
	}
}

// arriving is the cache of a pass during which another Subscription is created: right after
// the pass lists the namespace's Subscriptions, create runs (once), as a second Subscription
// applied together with the first lands while the pass resolves the first (or lands before
// it, and the cache does not show it yet).
type arriving struct {
	client.Client
	once   sync.Once
	create func()
}

func (a *arriving) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := a.Client.List(ctx, list, opts...)
	if _, ok := list.(*v1alpha1.SubscriptionList); ok && err == nil {
		a.once.Do(a.create)
	}
	return err
}

// TestNoPlanFromASetThatChanged: two Subscriptions are applied together, and the second is
// created while the pass resolves the first alone. The pass must not act on that resolution
// — an InstallPlan for the first alone may install what the second's constraints forbid,
// and a later pass resolving both would make a second plan for the first while the first
// one runs (TestPreviewMatchesControllers, seed 16, case 79 installed both versions of the
// operator so) — nor write anything; the next pass resolves both together.
func TestNoPlanFromASetThatChanged(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "arriving")
	olmtest.OwnGroup(t, env, ns)
	subscribe := func(name, pkg string) {
		olmtest.Create(t, env, &v1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: "olm", Package: pkg, Channel: "stable"},
		})
	}
	subscribe("d", "d")
	c := catalog.ReadFBC(strings.NewReader(fixtureFBC), "catalog.json")
	catalogs := fixtureCatalogs{resolve.New([]resolve.Catalog{{Name: "cat", Namespace: "olm", Content: c}}, resolve.Options{GlobalNamespace: "olm"})}
	cache := &arriving{Client: env.Client, create: func() { subscribe("b", "b") }}
	r := &subscription.Reconciler{Client: cache, APIReader: env.Client, Catalogs: catalogs,
		Recorder: events.NewFakeRecorder(100), Options: subscription.Options{GlobalCatalogNamespace: "olm"}}
	pass := func() (map[string]*v1alpha1.Subscription, []v1alpha1.InstallPlan) {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns}}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		var subs v1alpha1.SubscriptionList
		var plans v1alpha1.InstallPlanList
		for _, l := range []client.ObjectList{&subs, &plans} {
			if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
		}
		byName := map[string]*v1alpha1.Subscription{}
		for i := range subs.Items {
			byName[subs.Items[i].Name] = &subs.Items[i]
		}
		return byName, plans.Items
	}

	subs, plans := pass()
	if len(subs) != 2 {
		t.Fatalf("%d Subscriptions after the first pass, want 2 (b created during it)", len(subs))
	}
	if len(plans) != 0 || subs["d"].Status.InstallPlanRef != nil || subs["d"].Status.CurrentCSV != "" {
		t.Errorf("the pass that resolved d without b made %d plans and wrote d's status (currentCSV %q, reference %+v); want nothing",
			len(plans), subs["d"].Status.CurrentCSV, subs["d"].Status.InstallPlanRef)
	}
	if len(plans) != 0 {
		return
	}
	subs, plans = pass()
	if len(plans) != 2 {
		t.Fatalf("%d plans after the pass that saw both, want one each", len(plans))
	}
	for _, name := range []string{"d", "b"} {
		if s := subs[name]; s.Status.InstallPlanRef == nil || s.Status.CurrentCSV != name+".v1.0.0" {
			t.Errorf("Subscription %s: currentCSV %q, reference %+v; want %s.v1.0.0 and its plan", name, s.Status.CurrentCSV, s.Status.InstallPlanRef, name)
		}
	}
}

// loadingCatalogs is the registry of a process that has not loaded some catalogs yet: loaded
// names those it holds, and the resolver sees only them.
type loadingCatalogs struct {
	r      *resolve.Resolver
	loaded map[client.ObjectKey]bool
}

func (c loadingCatalogs) Resolver() (*resolve.Resolver, uint64) { return c.r, 1 }
func (c loadingCatalogs) Loaded(key client.ObjectKey) bool      { return c.loaded[key] }

// TestWaitsForACatalogNotLoadedYet: olmsync restarted (or another replica took the lead):
// the CatalogSource's status still says READY, from the process before, but this process
// has not loaded the catalog yet. A pass then must not resolve without it — that would write
// ResolutionFailed ("no operators found"), and if the load changes nothing in the
// CatalogSource's status, no event would ever bring the namespace back. It waits and looks
// again; once the catalog is loaded, it resolves and makes the plan.
func TestWaitsForACatalogNotLoadedYet(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "catalog-loading")
	olmtest.OwnGroup(t, env, ns)
	cs := &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cat"},
		Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: "example.com/catalog:latest"},
	}
	olmtest.Create(t, env, cs)
	cs.Status.GRPCConnectionState = &v1alpha1.GRPCConnectionState{LastObservedState: v1alpha1.ConnectionStateReady, LastConnectTime: metav1.Now()}
	if err := env.Client.Status().Update(ctx, cs); err != nil {
		t.Fatal(err)
	}
	olmtest.Create(t, env, &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "d"},
		Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: ns, Package: "d", Channel: "stable"},
	})
	opts := resolve.Options{GlobalNamespace: "olm"}
	notYet := loadingCatalogs{r: resolve.New(nil, opts)}
	r := &subscription.Reconciler{Client: env.Client, APIReader: env.Client, Catalogs: notYet,
		Recorder: events.NewFakeRecorder(100), Options: subscription.Options{GlobalCatalogNamespace: "olm", RetryInterval: time.Second}}
	req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns}}
	res, err := r.Reconcile(ctx, req)
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	s := &v1alpha1.Subscription{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "d"}, s); err != nil {
		t.Fatal(err)
	}
	if c := subscription.Condition(&s.Status, v1alpha1.SubscriptionResolutionFailed); c != nil && c.Status == "True" {
		t.Errorf("resolved without the catalog not loaded yet: ResolutionFailed %q", c.Message)
	}
	if res.RequeueAfter != time.Second {
		t.Errorf("requeue after %s, want the retry interval (1s): nothing else brings the namespace back", res.RequeueAfter)
	}

	c := catalog.ReadFBC(strings.NewReader(fixtureFBC), "catalog.json")
	r.Catalogs = loadingCatalogs{r: resolve.New([]resolve.Catalog{{Name: "cat", Namespace: ns, Content: c}}, opts),
		loaded: map[client.ObjectKey]bool{client.ObjectKeyFromObject(cs): true}}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("reconcile once loaded: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "d"}, s); err != nil {
		t.Fatal(err)
	}
	if s.Status.CurrentCSV != "d.v1.0.0" || s.Status.InstallPlanRef == nil {
		t.Errorf("once loaded: currentCSV %q, plan %+v; want d.v1.0.0 and its plan (conditions %+v)", s.Status.CurrentCSV, s.Status.InstallPlanRef, s.Status.Conditions)
	}
}
