package operatorgroup_test

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/reconcile/olm/operatorgroup"
)

// TestSameNamedGroupsEachGetTheirClusterRoles: two OperatorGroups named og in two
// namespaces each get their own admin, edit and view ClusterRoles, named as OLM names them
// (olm.og.og.<suffix>-<hash of namespace, name and suffix>), owned by their group, with no
// ClusterRoleConflict — with the seed's names (og-admin, ...) only the first group got
// roles. A role the group owned under the seed's name (what olmsync wrote before) is
// deleted; deleting a group deletes its roles and leaves the other group's.
func TestSameNamedGroupsEachGetTheirClusterRoles(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	r := &operatorgroup.Reconciler{Client: env.Client, APIReader: env.Client}
	var keys []client.ObjectKey
	for _, prefix := range []string{"same-name-a", "same-name-b"} {
		ns := olmtest.NewNamespace(t, env, prefix)
		keys = append(keys, client.ObjectKey{Namespace: ns, Name: "og"})
		olmtest.OwnGroup(t, env, ns)
	}
	// What an earlier olmsync left for the first group: a role of the seed's name.
	seedRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("og-admin-%s", keys[0].Namespace),
		Labels: map[string]string{
			"olm.owner": "og", "olm.owner.namespace": keys[0].Namespace, "olm.owner.kind": "OperatorGroup", "olm.managed": "true",
		},
	}}
	olmtest.Create(t, env, seedRole)

	seen := map[string]string{}
	for _, key := range keys {
		og := syncAndGet(t, env, r, key)
		if c := apimeta.FindStatusCondition(og.Status.Conditions, operatorgroup.ConditionClusterRoleConflict); c != nil {
			t.Errorf("%s: %+v", key, c)
		}
		for _, suffix := range []string{"admin", "edit", "view"} {
			name := groups.GroupClusterRoleName(og, suffix)
			if other, ok := seen[name]; ok {
				t.Fatalf("ClusterRole %s is both %s's and %s's", name, other, key)
			}
			seen[name] = key.String()
			role := &rbacv1.ClusterRole{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, role); err != nil {
				t.Fatalf("%s: ClusterRole %s: %v", key, name, err)
			}
			if role.Labels["olm.owner"] != "og" || role.Labels["olm.owner.namespace"] != key.Namespace ||
				role.Labels["olm.owner.kind"] != "OperatorGroup" || role.Labels["olm.managed"] != "true" {
				t.Errorf("%s: labels %v", name, role.Labels)
			}
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(seedRole), &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
		t.Errorf("the group's role of the seed's name %s is still there (%v)", seedRole.Name, err)
	}

	first := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: keys[0].Namespace, Name: "og"}}
	if err := env.Client.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: keys[0]}); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"admin", "edit", "view"} {
		gone := groups.GroupClusterRoleName(first, suffix)
		if err := env.Client.Get(ctx, client.ObjectKey{Name: gone}, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
			t.Errorf("ClusterRole %s of the deleted group: %v, want not found", gone, err)
		}
		second := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: keys[1].Namespace, Name: "og"}}
		kept := groups.GroupClusterRoleName(second, suffix)
		if err := env.Client.Get(ctx, client.ObjectKey{Name: kept}, &rbacv1.ClusterRole{}); err != nil {
			t.Errorf("ClusterRole %s of the other group: %v", kept, err)
		}
	}
}

// TestClusterRoleOfAnotherOwner: a ClusterRole of the name the group's role must have,
// made by someone else, is left as it is, and ClusterRoleConflict names it.
func TestClusterRoleOfAnotherOwner(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "role-taken")
	group := &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}},
	}
	taken := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: groups.GroupClusterRoleName(group, "edit")},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	olmtest.Create(t, env, taken)
	olmtest.Create(t, env, group)
	r := &operatorgroup.Reconciler{Client: env.Client, APIReader: env.Client}
	og := syncAndGet(t, env, r, client.ObjectKeyFromObject(group))
	c := apimeta.FindStatusCondition(og.Status.Conditions, operatorgroup.ConditionClusterRoleConflict)
	if want := fmt.Sprintf("ClusterRole %s exists and belongs to no OperatorGroup", taken.Name); c == nil || c.Message != want {
		t.Errorf("condition %+v, want message %q", c, want)
	}
	got := &rbacv1.ClusterRole{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(taken), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != 1 || got.Rules[0].Resources[0] != "pods" || got.Labels["olm.owner"] != "" {
		t.Errorf("someone else's role was changed: %+v", got)
	}
}
