package operatorgroup

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/groups"
)

// TestRenamedRolesThroughTheOwnerIndex: through a real informer cache indexing ClusterRoles
// by their owning group (indexOwner, as SetupWithManager registers it), a group deletes the
// roles it owns that are none of its current ones, and nothing else: not its current role,
// not the role of a group of the same name in another namespace, not a CSV's role of the
// group's name. TestSameNamedGroupsEachGetTheirClusterRoles takes the same step reading the
// API server, without the index; the manager's tests take it through the index.
func TestRenamedRolesThroughTheOwnerIndex(t *testing.T) {
	env := testenv.Get(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cluster-scoped roles named apart from other tests' (no namespace is needed: the
	// owner labels only name one).
	nsA, nsB := fmt.Sprintf("owner-index-a-%d", time.Now().UnixNano()), fmt.Sprintf("owner-index-b-%d", time.Now().UnixNano())
	role := func(name, owner, namespace, kind string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			groups.OwnerLabel: owner, groups.OwnerNamespaceLabel: namespace, groups.OwnerKindLabel: kind,
			groups.ManagedLabel: groups.ManagedLabelValue,
		}}}
	}
	current := role(nsA+"-og-current", "og", nsA, operatorsv1.OperatorGroupKind)
	renamed := role(nsA+"-og-renamed", "og", nsA, operatorsv1.OperatorGroupKind)
	otherGroup := role(nsB+"-og-renamed", "og", nsB, operatorsv1.OperatorGroupKind)
	csvRole := role(nsA+"-csv-og", "og", nsA, v1alpha1.ClusterServiceVersionKind)
	all := []*rbacv1.ClusterRole{current, renamed, otherGroup, csvRole}
	for _, r := range all {
		if err := env.Client.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), r) })
	}

	c := env.CachedClient(t, testenv.Index{Object: &rbacv1.ClusterRole{}, Field: indexOwner, Value: ownerOfClusterRole})
	// The index holds each group's roles under its key and no CSV's.
	var indexed rbacv1.ClusterRoleList
	key := groups.OwnerKey(operatorsv1.OperatorGroupKind, nsA, "og")
	if err := c.List(ctx, &indexed, client.MatchingFields{indexOwner: key}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range indexed.Items {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	if want := []string{current.Name, renamed.Name}; !slices.Equal(names, want) {
		t.Fatalf("the index has %v under %s, want %v", names, key, want)
	}

	r := &Reconciler{Client: c, APIReader: env.Client, ownerIndexed: true}
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "og"}}
	if err := r.deleteRenamedClusterRoles(ctx, og, []rbacv1.ClusterRole{*current}); err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), &rbacv1.ClusterRole{})
		switch {
		case r == renamed && !apierrors.IsNotFound(err):
			t.Errorf("the group's renamed role %s: %v, want it deleted", r.Name, err)
		case r != renamed && err != nil:
			t.Errorf("role %s: %v, want it kept", r.Name, err)
		}
	}
}
