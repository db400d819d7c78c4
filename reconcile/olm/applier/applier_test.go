package applier_test

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm/applier"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// TestApplyAfterAStaleRead: the cache holds an older copy of an aggregated ClusterRole than the
// API server, whose rules another writer (Kubernetes' aggregation controller) has filled in
// since. Applying a new aggregation rule is refused once as a conflict, then merged into the
// API server's copy and written: the new rule, and the rules the other writer left.
func TestApplyAfterAStaleRead(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	selector := func(keys ...string) *rbacv1.AggregationRule {
		rule := &rbacv1.AggregationRule{}
		for _, k := range keys {
			rule.ClusterRoleSelectors = append(rule.ClusterRoleSelectors, metav1.LabelSelector{MatchLabels: map[string]string{k: "true"}})
		}
		return rule
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta:      metav1.ObjectMeta{GenerateName: "applier-stale-", Labels: map[string]string{"olm.owner.kind": "OperatorGroup"}},
		AggregationRule: selector("aggregate-a"),
	}
	if err := env.Client.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), role) })
	stale := role.DeepCopy()

	filled := []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	live := &rbacv1.ClusterRole{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(role), live); err != nil {
		t.Fatal(err)
	}
	live.Rules = filled
	if err := env.Client.Update(ctx, live); err != nil {
		t.Fatal(err)
	}

	desired := &rbacv1.ClusterRole{
		TypeMeta:        metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta:      metav1.ObjectMeta{Name: role.Name, Labels: role.Labels},
		AggregationRule: selector("aggregate-a", "aggregate-b"),
	}
	a := &applier.Applier{Client: &olmtest.StaleCache{Client: env.Client, Stale: stale}, APIReader: env.Client}
	if err := a.ApplyClusterRole(ctx, desired); err != nil {
		t.Fatalf("apply from a stale copy: %v", err)
	}
	got := &rbacv1.ClusterRole{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(role), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(desired.AggregationRule, got.AggregationRule); diff != "" {
		t.Errorf("aggregation rule (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(filled, got.Rules); diff != "" {
		t.Errorf("the rules the other writer filled in (-want +got):\n%s", diff)
	}
}
