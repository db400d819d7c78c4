package installplan_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
)

// TestStaleCopyOfThePlanWritesNothing: the plan is read from the cache, never from the API
// server. A reconcile from a copy older than the controller's last status write (the cache
// not caught up) writes nothing — its status patch would be the difference from that older
// copy — and once the cache holds the write, the plan's status is what the first write made.
func TestStaleCopyOfThePlanWritesNothing(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "stale-plan")
	olmtest.OwnGroup(t, env, ns)
	olmtest.Create(t, env, installPlan(ns, "by-hand", v1alpha1.ApprovalAutomatic, "nowhere.v1.0.0"))
	key := client.ObjectKey{Namespace: ns, Name: "by-hand"}
	created := &v1alpha1.InstallPlan{}
	if err := env.Client.Get(ctx, key, created); err != nil {
		t.Fatal(err)
	}
	lagging := &olmtest.StaleCache{Client: env.Client}
	reads := &olmtest.APIReads{Reader: env.Client}
	r := &installplan.Reconciler{Client: lagging, APIReader: reads, Catalogs: catalogsource.NewRegistry("", resolve.Options{})}
	syncAndGet := func() *v1alpha1.InstallPlan {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		ip := &v1alpha1.InstallPlan{}
		if err := env.Client.Get(ctx, key, ip); err != nil {
			t.Fatal(err)
		}
		return ip
	}

	planning := syncAndGet()
	if c := findCondition(planning, v1alpha1.InstallPlanResolved); planning.Status.Phase != v1alpha1.InstallPlanPhasePlanning || c == nil || c.Status != corev1.ConditionFalse {
		t.Fatalf("phase %q, Resolved %+v; want Planning, Resolved False (no catalog holds the CSV)", planning.Status.Phase, c)
	}
	lagging.Stale = created
	if got := syncAndGet(); got.ResourceVersion != planning.ResourceVersion {
		t.Errorf("the reconcile of the copy from before the status write wrote (resourceVersion %s, was %s)", got.ResourceVersion, planning.ResourceVersion)
	}
	lagging.Stale = nil
	if got := syncAndGet(); got.Status.Phase != v1alpha1.InstallPlanPhasePlanning || len(got.Status.Conditions) != len(planning.Status.Conditions) {
		t.Errorf("phase %q, conditions %+v; want what the first write made: %+v", got.Status.Phase, got.Status.Conditions, planning.Status.Conditions)
	}
	if n := reads.Of(&v1alpha1.InstallPlan{}); n > 0 {
		t.Errorf("%d reads of the plan from the API server, want none (the cache)", n)
	}
}

// TestStaleCopyOfThePlanExecutesNothing: a plan executed from a copy older than its last
// status write (the cache not caught up) would run its steps again — and a CRD step whose
// CRD the plan itself created moments ago takes the update path, which lists the CRD's
// custom resources (OLM validates them against the new schema), a right olmsync's chart
// does not grant. The reconcile of such a copy executes no step, lists nothing, and writes
// nothing; the plan stays as the execution left it.
func TestStaleCopyOfThePlanExecutesNothing(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "stale-exec")
	group := ns + ".example.com"
	olmtest.OwnGroupTargeted(t, env, ns) // no OperatorGroup controller runs here
	const csvName = "widget.v1.0.0"
	plan := installingWidget(t, env, ns, "install-stale", group)
	before := plan.DeepCopy() // the copy a lagging cache still holds once the plan executed
	key := client.ObjectKeyFromObject(plan)
	r := &installplan.Reconciler{Client: env.Client, APIReader: env.Client, Mapper: env.Client.RESTMapper()}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	executed := &v1alpha1.InstallPlan{}
	if err := env.Client.Get(ctx, key, executed); err != nil {
		t.Fatal(err)
	}
	if executed.Status.Phase != v1alpha1.InstallPlanPhaseComplete {
		t.Fatalf("phase %s, message %q, steps %+v; want Complete", executed.Status.Phase, executed.Status.Message, executed.Status.Plan)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: csvName}, csv); err != nil {
		t.Fatal(err)
	}

	reads := &olmtest.APIReads{Reader: env.Client}
	lagging := &olmtest.StaleCache{Client: env.Client, Stale: before}
	r = &installplan.Reconciler{Client: lagging, APIReader: reads, Mapper: env.Client.RESTMapper()}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatalf("reconcile of the stale copy: %v", err)
	}
	if n := reads.Of(&unstructured.UnstructuredList{}); n > 0 {
		t.Errorf("the stale copy's CRD step listed custom resources %d times, want none (the step is done)", n)
	}
	if n := reads.Of(&operatorsv1.OperatorGroupList{}); n > 0 {
		t.Errorf("the namespace's OperatorGroups listed %d times from the API server, want none (the cache, as OLM's lister)", n)
	}
	got := &v1alpha1.InstallPlan{}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != executed.ResourceVersion {
		t.Errorf("the plan was written from the stale copy (resourceVersion %s, was %s)", got.ResourceVersion, executed.ResourceVersion)
	}
	gotCSV := &v1alpha1.ClusterServiceVersion{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(csv), gotCSV); err != nil {
		t.Fatal(err)
	}
	if gotCSV.ResourceVersion != csv.ResourceVersion {
		t.Errorf("the CSV was written again from the stale copy (resourceVersion %s, was %s)", gotCSV.ResourceVersion, csv.ResourceVersion)
	}
}
