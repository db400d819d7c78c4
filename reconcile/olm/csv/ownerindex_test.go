package csv

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/olm/phase"
)

// TestIndexedReadsFindWhatLabelsFind: through a real informer cache holding the controller's
// indexes (indexCopiedFrom, indexOwner, registered as SetupWithManager registers them), a
// CSV's copies and its cluster RBAC are exactly those its labels select — not a copy of
// another CSV from the same namespace, nor a copy of the same name from another namespace,
// nor the RBAC of another CSV of the same name or of an OperatorGroup — and the same as the
// reads without the indexes find.
func TestIndexedReadsFindWhatLabelsFind(t *testing.T) {
	env := testenv.Get(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ns [3]string
	for i := range ns {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "csv-owner-index-"}}
		if err := env.Client.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		ns[i] = n.Name
	}
	csvIn := func(namespace, name, copiedFrom string) *v1alpha1.ClusterServiceVersion {
		c := &v1alpha1.ClusterServiceVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: v1alpha1.ClusterServiceVersionSpec{DisplayName: name,
				InstallStrategy: v1alpha1.NamedInstallStrategy{StrategyName: v1alpha1.InstallStrategyNameDeployment}},
		}
		if copiedFrom != "" {
			c.Labels = map[string]string{v1alpha1.CopiedLabelKey: copiedFrom}
		}
		return c
	}
	original := csvIn(ns[0], "etcd.v1", "")
	theCopy := csvIn(ns[1], "etcd.v1", ns[0])
	for _, o := range []client.Object{
		original, theCopy,
		csvIn(ns[1], "other.v1", ns[0]), // another CSV's copy, from the same namespace
		csvIn(ns[2], "etcd.v1", ns[1]),  // a copy of the same name, from another namespace
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	labelled := func(name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: ns[0] + "-" + name, Labels: labels}
	}
	other := csvIn(ns[1], "etcd.v1", "")
	roles := []*rbacv1.ClusterRole{
		{ObjectMeta: labelled("mine", install.OwnerLabels(original))},
		{ObjectMeta: labelled("same-name-elsewhere", install.OwnerLabels(other))},
		{ObjectMeta: labelled("a-group", map[string]string{groups.OwnerLabel: original.Name, groups.OwnerNamespaceLabel: ns[0], groups.OwnerKindLabel: "OperatorGroup"})},
	}
	bindings := []*rbacv1.ClusterRoleBinding{
		{ObjectMeta: labelled("mine", install.OwnerLabels(original)), RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"}},
		{ObjectMeta: labelled("same-name-elsewhere", install.OwnerLabels(other)), RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"}},
	}
	for _, o := range roles {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
	for _, o := range bindings {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}

	cached := env.CachedClient(t,
		testenv.Index{Object: &v1alpha1.ClusterServiceVersion{}, Field: indexCopiedFrom, Value: copiedFrom},
		testenv.Index{Object: &rbacv1.ClusterRole{}, Field: indexOwner, Value: ownerCSV},
		testenv.Index{Object: &rbacv1.ClusterRoleBinding{}, Field: indexOwner, Value: ownerCSV},
	)

	// Each index holds under a key what that key's owner made, and nothing else.
	var byIndex v1alpha1.ClusterServiceVersionList
	if err := cached.List(ctx, &byIndex, client.MatchingFields{indexCopiedFrom: original.Namespace + "/" + original.Name}); err != nil {
		t.Fatal(err)
	}
	if got := sortedNames(byIndex.Items, func(c v1alpha1.ClusterServiceVersion) string { return c.Namespace + "/" + c.Name }); !slices.Equal(got, []string{theCopy.Namespace + "/" + theCopy.Name}) {
		t.Errorf("%s holds %v", indexCopiedFrom, got)
	}
	var rolesByIndex rbacv1.ClusterRoleList
	if err := cached.List(ctx, &rolesByIndex, client.MatchingFields{indexOwner: groups.OwnerKey(v1alpha1.ClusterServiceVersionKind, original.Namespace, original.Name)}); err != nil {
		t.Fatal(err)
	}
	if got := sortedNames(rolesByIndex.Items, func(c rbacv1.ClusterRole) string { return c.Name }); !slices.Equal(got, []string{roles[0].Name}) {
		t.Errorf("%s holds %v", indexOwner, got)
	}

	for _, r := range []*Reconciler{{Client: cached, indexed: true}, {Client: env.Client}} {
		copies, err := r.copiesOf(ctx, original.Namespace, original.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(copies) != 1 || copies[0].Namespace != theCopy.Namespace || copies[0].Name != theCopy.Name {
			t.Errorf("indexed=%v: copies %v, want %s/%s only", r.indexed, sortedNames(copies, func(c v1alpha1.ClusterServiceVersion) string { return c.Namespace + "/" + c.Name }), theCopy.Namespace, theCopy.Name)
		}
		var snap phase.Snapshot
		if err := r.readOwnedRBAC(ctx, original, &snap); err != nil {
			t.Fatal(err)
		}
		if got := sortedNames(snap.ClusterRoles, func(c rbacv1.ClusterRole) string { return c.Name }); !slices.Equal(got, []string{roles[0].Name}) {
			t.Errorf("indexed=%v: cluster roles %v, want %s only", r.indexed, got, roles[0].Name)
		}
		if got := sortedNames(snap.ClusterRoleBindings, func(c rbacv1.ClusterRoleBinding) string { return c.Name }); !slices.Equal(got, []string{bindings[0].Name}) {
			t.Errorf("indexed=%v: cluster role bindings %v, want %s only", r.indexed, got, bindings[0].Name)
		}
	}
}

func sortedNames[T any](items []T, name func(T) string) []string {
	var out []string
	for _, i := range items {
		out = append(out, name(i))
	}
	slices.Sort(out)
	return out
}
