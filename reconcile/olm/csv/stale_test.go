package csv_test

import (
	"context"
	"testing"

	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/reconcile/olm/csv"
)

// gadgetCSV is an operator whose only requirement is its minKubeVersion: no CRDs, APIs or
// permissions.
const gadgetCSV = `
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: gadget.v1.0.0
spec:
  displayName: Gadget
  version: 1.0.0
  minKubeVersion: 99.0.0
  installModes:
  - {type: OwnNamespace, supported: true}
  - {type: SingleNamespace, supported: true}
  - {type: MultiNamespace, supported: false}
  - {type: AllNamespaces, supported: false}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: gadget-operator
        spec:
          replicas: 1
          selector: {matchLabels: {app: gadget-operator}}
          template:
            metadata: {labels: {app: gadget-operator}}
            spec:
              containers:
              - {name: operator, image: "example.com/gadget-operator:1.0.0"}
`

// createGadget creates gadgetCSV in ns, in a namespace whose OperatorGroup targets it.
func createGadget(t *testing.T, env *testenv.Env, ns string) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	olmtest.OwnGroupTargeted(t, env, ns) // no OperatorGroup controller runs here
	obj := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict([]byte(gadgetCSV), obj); err != nil {
		t.Fatal(err)
	}
	obj.Namespace = ns
	create(t, env, obj)
	return obj
}

// TestRequirementsClearedAfterAStaleRead: a Pending CSV whose minKubeVersion the server does
// not meet is edited to require nothing while a sync runs from the copy before the edit
// (the cache had not caught up). That sync's write of the requirement it found unmet must
// not land over the edit: the next sync, from the edited copy, finds no difference in
// requirementStatus to write, and no later phase rewrites it — the requirement would stay.
// Once the cache holds the edit, the CSV moves on with no requirements listed. The CSV is
// read from the cache, never from the API server.
func TestRequirementsClearedAfterAStaleRead(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := newNamespace(t, env, "stale-read")
	obj := createGadget(t, env, ns)
	key := client.ObjectKeyFromObject(obj)
	lagging := &olmtest.StaleCache{Client: env.Client}
	reads := &olmtest.APIReads{Reader: env.Client}
	r := &csv.Reconciler{
		Client:    lagging,
		APIReader: reads,
		Discovery: discovery.NewDiscoveryClientForConfigOrDie(env.Config),
	}
	syncAndGet := func() *v1alpha1.ClusterServiceVersion {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		return getCSV(t, env, ns, obj.Name)
	}

	pending := syncAndGet()
	if pending.Status.Phase != v1alpha1.CSVPhasePending || len(pending.Status.RequirementStatus) > 0 {
		t.Fatalf("first sync: phase %q, requirements %+v; want Pending, none checked yet", pending.Status.Phase, pending.Status.RequirementStatus)
	}

	// The cache: the CSV before the edit.
	lagging.Stale = pending.DeepCopy()
	edited := pending.DeepCopy()
	edited.Spec.MinKubeVersion = ""
	if err := env.Client.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	if got := syncAndGet(); len(got.Status.RequirementStatus) > 0 {
		t.Fatalf("the sync from the copy before the edit wrote its requirements over it: %+v", got.Status.RequirementStatus)
	}

	lagging.Stale = nil
	got := syncAndGet()
	if len(got.Status.RequirementStatus) > 0 {
		t.Errorf("requirements %+v after the spec stopped requiring anything, want none", got.Status.RequirementStatus)
	}
	if got.Status.Phase != v1alpha1.CSVPhaseInstallReady && got.Status.Phase != v1alpha1.CSVPhaseInstalling {
		t.Errorf("phase %q, want %s or past it", got.Status.Phase, v1alpha1.CSVPhaseInstallReady)
	}
	if n := reads.Of(&v1alpha1.ClusterServiceVersion{}); n > 0 {
		t.Errorf("%d reads of the CSV from the API server, want none (the cache)", n)
	}
}

// TestSyncStopsOnACopyItsWriteReplaced: a sync wrote the CSV's status; the next reconcile
// reads the CSV from a cache that has not caught up with that write — the very version the
// write replaced. It stops there: no write (the API server would refuse it, 409) and no
// sync. Once the cache holds the write, the CSV syncs on.
func TestSyncStopsOnACopyItsWriteReplaced(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := newNamespace(t, env, "superseded")
	obj := createGadget(t, env, ns)
	key := client.ObjectKeyFromObject(obj)
	created := getCSV(t, env, ns, obj.Name)

	counting, calls := olmtest.CountCalls(t, env)
	lagging := &olmtest.StaleCache{Client: counting}
	r := &csv.Reconciler{Client: lagging, APIReader: env.Client, Discovery: discovery.NewDiscoveryClientForConfigOrDie(env.Config)}
	reconcileOnce := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}

	reconcileOnce()
	pending := getCSV(t, env, ns, obj.Name)
	if pending.ResourceVersion == created.ResourceVersion || calls.Writes.Load() == 0 {
		t.Fatalf("the first sync wrote nothing (%d writes): phase %q", calls.Writes.Load(), pending.Status.Phase)
	}

	lagging.Stale = created // the cache: the CSV before that write
	calls.Writes.Store(0)
	calls.Lists.Store(0)
	reconcileOnce()
	if n, m := calls.Writes.Load(), calls.Lists.Load(); n != 0 || m != 0 {
		t.Errorf("a reconcile of the copy the last write replaced made %d writes and %d cache lists, want none: it stops", n, m)
	}
	if got := getCSV(t, env, ns, obj.Name); got.ResourceVersion != pending.ResourceVersion {
		t.Errorf("the CSV changed (%s → %s) from a copy older than the last write", pending.ResourceVersion, got.ResourceVersion)
	}

	lagging.Stale = nil // the cache caught up
	reconcileOnce()
	if n := calls.Lists.Load(); n == 0 {
		t.Error("once the cache holds the write, the CSV is not synced")
	}
}

// TestProvidedAPIsFromAStaleGroup: a CSV adds its APIs to its group's olm.providedAPIs from
// the group its cache listed. When that copy is stale — another member of the group wrote it
// since — the write is refused, and the sync stops without an error (the newer group's
// event queues the namespace's CSVs) rather than fail, be logged and back off. Nothing is
// written over the newer group; the next sync, from it, adds the CSV's APIs beside the
// other member's.
func TestProvidedAPIsFromAStaleGroup(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	dir := bundleDir(t, "prometheus", "0.27.0")
	installCRDs(t, env, dir)
	ns := newNamespace(t, env, "stale-group")
	olmtest.OwnGroupTargeted(t, env, ns)
	obj := loadCSV(t, dir, ns)
	create(t, env, obj)
	apis, err := groups.ProvidedAPIs(obj)
	if err != nil {
		t.Fatal(err)
	}

	// The cache: every group as it is now, before another member adds its API.
	var stale operatorsv1.OperatorGroupList
	if err := env.Client.List(ctx, &stale); err != nil {
		t.Fatal(err)
	}
	og := &operatorsv1.OperatorGroup{}
	groupKey := client.ObjectKey{Namespace: ns, Name: "og"}
	if err := env.Client.Get(ctx, groupKey, og); err != nil {
		t.Fatal(err)
	}
	const other = "Other.v1.example.com"
	og.Annotations = map[string]string{operatorsv1.OperatorGroupProvidedAPIsAnnotationKey: other}
	if err := env.Client.Update(ctx, og); err != nil {
		t.Fatal(err)
	}
	groupAPIs := func() groups.APISet {
		t.Helper()
		got := &operatorsv1.OperatorGroup{}
		if err := env.Client.Get(ctx, groupKey, got); err != nil {
			t.Fatal(err)
		}
		return groups.ParseAPISet(got.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey])
	}

	r := &csv.Reconciler{Client: &olmtest.StaleCache{Client: env.Client, StaleLists: []client.ObjectList{&stale}},
		APIReader: env.Client, Discovery: discovery.NewDiscoveryClientForConfigOrDie(env.Config)}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("the sync from the stale group: %v, want it to stop without an error", err)
	}
	if got := groupAPIs().String(); got != other {
		t.Fatalf("olm.providedAPIs = %q after the sync from the stale group, want the other member's %q alone", got, other)
	}

	r.Client = env.Client // the cache caught up
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if got, want := groupAPIs(), apis.Union(groups.ParseAPISet(other)); got.String() != want.String() {
		t.Errorf("olm.providedAPIs = %q, want %q", got.String(), want.String())
	}
}
