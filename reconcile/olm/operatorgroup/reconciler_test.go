package operatorgroup_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm/operatorgroup"
)

// TestSecondGroupGoneAfterAStaleRead: a namespace with two groups has MultipleOperatorGroup
// on them; the sync that the removal of one wakes runs before the cache holds that status
// write. Its status patch, the difference from the copy before the condition, would not
// remove the condition: it must be refused, and the sync once the cache holds the write
// removes the condition from the group left. The group is read from the cache, never from
// the API server.
func TestSecondGroupGoneAfterAStaleRead(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "stale-read")
	key := client.ObjectKey{Namespace: ns, Name: "og"}
	olmtest.OwnGroup(t, env, ns)
	second := &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "second"},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}},
	}
	olmtest.Create(t, env, second)
	// What the cache holds until it sees the first status write: the group as created.
	stale := &operatorsv1.OperatorGroup{}
	if err := env.Client.Get(ctx, key, stale); err != nil {
		t.Fatal(err)
	}
	lagging := &olmtest.StaleCache{Client: env.Client, Stale: stale}
	reads := &olmtest.APIReads{Reader: env.Client}
	r := &operatorgroup.Reconciler{Client: lagging, APIReader: reads}
	og := syncAndGet(t, env, r, key)
	if !apimeta.IsStatusConditionTrue(og.Status.Conditions, operatorsv1.MultipleOperatorGroupCondition) {
		t.Fatalf("conditions %+v with two groups in the namespace, want %s", og.Status.Conditions, operatorsv1.MultipleOperatorGroupCondition)
	}

	if err := env.Client.Delete(ctx, second); err != nil {
		t.Fatal(err)
	}
	got := syncAndGet(t, env, r, key)
	if got.ResourceVersion != og.ResourceVersion && apimeta.FindStatusCondition(got.Status.Conditions, operatorsv1.MultipleOperatorGroupCondition) != nil {
		t.Errorf("the sync from the copy before the condition wrote a status that keeps it: %+v", got.Status.Conditions)
	}
	lagging.Stale = nil
	og = syncAndGet(t, env, r, key)
	if c := apimeta.FindStatusCondition(og.Status.Conditions, operatorsv1.MultipleOperatorGroupCondition); c != nil {
		t.Errorf("condition %+v with one group left, want none", c)
	}
	if len(og.Status.Namespaces) != 1 || og.Status.Namespaces[0] != ns {
		t.Errorf("namespaces %v, want [%s]", og.Status.Namespaces, ns)
	}
	if n := reads.Of(&operatorsv1.OperatorGroup{}); n > 0 {
		t.Errorf("%d reads of the group from the API server, want none (the cache)", n)
	}
}

// TestMissingServiceAccount: a group naming a service account that does not exist gets
// OLM's OperatorGroupServiceAccount condition and a status the API server accepts (its
// CRD requires status.lastUpdated, which only the target step had set); once the account
// exists, the condition goes and status.serviceAccountRef names it.
func TestMissingServiceAccount(t *testing.T) {
	env := testenv.Get(t)
	ns := olmtest.NewNamespace(t, env, "missing-sa")
	key := client.ObjectKey{Namespace: ns, Name: "og"}
	olmtest.Create(t, env, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}, ServiceAccountName: "installer"},
	})
	r := &operatorgroup.Reconciler{Client: env.Client, APIReader: env.Client}
	og := syncAndGet(t, env, r, key)
	c := apimeta.FindStatusCondition(og.Status.Conditions, operatorsv1.OperatorGroupServiceAccountCondition)
	if c == nil || c.Reason != operatorsv1.OperatorGroupServiceAccountReason || c.Message != "ServiceAccount installer not found" {
		t.Fatalf("condition %+v, want %s: ServiceAccount installer not found", c, operatorsv1.OperatorGroupServiceAccountCondition)
	}
	if og.Status.LastUpdated == nil {
		t.Error("status.lastUpdated is unset")
	}

	olmtest.Create(t, env, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "installer"}})
	og = syncAndGet(t, env, r, key)
	if c := apimeta.FindStatusCondition(og.Status.Conditions, operatorsv1.OperatorGroupServiceAccountCondition); c != nil {
		t.Errorf("condition %+v once the account exists, want none", c)
	}
	if ref := og.Status.ServiceAccountRef; ref == nil || ref.Name != "installer" {
		t.Errorf("serviceAccountRef %+v, want installer", ref)
	}
	sa := &corev1.ServiceAccount{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "installer"}, sa); err != nil {
		t.Fatal(err)
	}
	if sa.Labels["olm.managed"] != "true" {
		t.Errorf("service account labels %v, want olm.managed=true as OLM's labeller puts it", sa.Labels)
	}
	if len(og.Status.Namespaces) != 1 || og.Status.Namespaces[0] != ns {
		t.Errorf("namespaces %v, want [%s]", og.Status.Namespaces, ns)
	}
}

// TestNoMatchingNamespaceLeavesStatusEmpty: a group whose selector matches no namespace gets
// no status at all — no lastUpdated — as OLM leaves it (TestSyncOperatorGroups
// NoMatchingNamespace expects the status {}); once a namespace matches, the status lists it
// with lastUpdated.
func TestNoMatchingNamespaceLeavesStatusEmpty(t *testing.T) {
	env := testenv.Get(t)
	ns := olmtest.NewNamespace(t, env, "no-match")
	key := client.ObjectKey{Namespace: ns, Name: "og"}
	label := "olmsync.test/no-match-" + ns
	olmtest.Create(t, env, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec:       operatorsv1.OperatorGroupSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{label: "yes"}}},
	})
	r := &operatorgroup.Reconciler{Client: env.Client, APIReader: env.Client}
	og := syncAndGet(t, env, r, key)
	if og.Status.LastUpdated != nil || len(og.Status.Namespaces) != 0 || len(og.Status.Conditions) != 0 {
		t.Errorf("status %+v, want none", og.Status)
	}
	target := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "matched-", Labels: map[string]string{label: "yes"}}}
	olmtest.Create(t, env, target)
	og = syncAndGet(t, env, r, key)
	if og.Status.LastUpdated == nil || len(og.Status.Namespaces) != 1 || og.Status.Namespaces[0] != target.Name {
		t.Errorf("status %+v, want [%s] and lastUpdated", og.Status, target.Name)
	}
}

// syncAndGet runs one sync of the group and reads it back from the API server.
func syncAndGet(t *testing.T, env *testenv.Env, r *operatorgroup.Reconciler, key client.ObjectKey) *operatorsv1.OperatorGroup {
	t.Helper()
	ctx := context.Background()
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	og := &operatorsv1.OperatorGroup{}
	if err := env.Client.Get(ctx, key, og); err != nil {
		t.Fatal(err)
	}
	return og
}

// TestPruneFromAStaleRead: a group lists an API in olm.providedAPIs that no CSV of its
// namespace provides. A sync from a copy older than the group (the cache lagging behind a
// label someone added) prunes nothing and fails nothing — the newer version's event syncs
// the group again — and the sync from the current copy prunes the API.
func TestPruneFromAStaleRead(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "stale-prune")
	key := client.ObjectKey{Namespace: ns, Name: "og"}
	olmtest.Create(t, env, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og",
			Annotations: map[string]string{operatorsv1.OperatorGroupProvidedAPIsAnnotationKey: "Gone.v1.gone.example.com"}},
		Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}},
	})
	stale := &operatorsv1.OperatorGroup{}
	if err := env.Client.Get(ctx, key, stale); err != nil {
		t.Fatal(err)
	}
	newer := stale.DeepCopy()
	newer.Labels = map[string]string{"example.com/team": "a"}
	if err := env.Client.Update(ctx, newer); err != nil {
		t.Fatal(err)
	}
	lagging := &olmtest.StaleCache{Client: env.Client, Stale: stale}
	r := &operatorgroup.Reconciler{Client: lagging, APIReader: env.Client}
	if og := syncAndGet(t, env, r, key); og.ResourceVersion != newer.ResourceVersion {
		t.Errorf("the sync from the stale copy wrote the group: %+v", og)
	}
	lagging.Stale = nil
	if og := syncAndGet(t, env, r, key); og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey] != "" {
		t.Errorf("%s = %q, want the API no CSV provides pruned", operatorsv1.OperatorGroupProvidedAPIsAnnotationKey, og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey])
	}
}

// TestSyncStopsOnACopyItsWriteReplaced: once the controller has written a group, a reconcile
// that reads the copy that write replaced (the cache behind the write) stops at once — no
// list, no write: its status write would be refused, and the event of the version written
// syncs the group. Once the cache holds the write, the group is synced again.
func TestSyncStopsOnACopyItsWriteReplaced(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "superseded")
	key := client.ObjectKey{Namespace: ns, Name: "og"}
	olmtest.OwnGroup(t, env, ns)
	created := &operatorsv1.OperatorGroup{}
	if err := env.Client.Get(ctx, key, created); err != nil {
		t.Fatal(err)
	}

	counting, calls := olmtest.CountCalls(t, env)
	lagging := &olmtest.StaleCache{Client: counting}
	r := &operatorgroup.Reconciler{Client: lagging, APIReader: env.Client}

	synced := syncAndGet(t, env, r, key)
	if synced.ResourceVersion == created.ResourceVersion || calls.Writes.Load() == 0 {
		t.Fatalf("the first sync wrote nothing (%d writes): status %+v", calls.Writes.Load(), synced.Status)
	}

	lagging.Stale = created // the cache: the group before that write
	calls.Writes.Store(0)
	calls.Lists.Store(0)
	got := syncAndGet(t, env, r, key)
	if n, m := calls.Writes.Load(), calls.Lists.Load(); n != 0 || m != 0 {
		t.Errorf("a reconcile of the copy the last write replaced made %d writes and %d lists, want none: it stops", n, m)
	}
	if got.ResourceVersion != synced.ResourceVersion {
		t.Errorf("the group changed (%s → %s) from a copy older than the last write", synced.ResourceVersion, got.ResourceVersion)
	}

	lagging.Stale = nil // the cache caught up
	syncAndGet(t, env, r, key)
	if calls.Lists.Load() == 0 {
		t.Error("once the cache holds the write, the group is not synced")
	}
}
