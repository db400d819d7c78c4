package olmtest

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/rbac"
)

// ClusterRBAC is every Role, ClusterRole and binding of the control plane, as the preview's
// RBAC core reads a cluster.
func ClusterRBAC(t testing.TB, env *testenv.Env) rbac.Policy {
	t.Helper()
	ctx := context.Background()
	var (
		p                   rbac.Policy
		roles               rbacv1.RoleList
		roleBindings        rbacv1.RoleBindingList
		clusterRoles        rbacv1.ClusterRoleList
		clusterRoleBindings rbacv1.ClusterRoleBindingList
	)
	for _, err := range []error{
		env.Client.List(ctx, &roles), env.Client.List(ctx, &roleBindings),
		env.Client.List(ctx, &clusterRoles), env.Client.List(ctx, &clusterRoleBindings),
	} {
		if err != nil {
			t.Fatalf("read the cluster's RBAC: %v", err)
		}
	}
	p.Roles, p.RoleBindings = roles.Items, roleBindings.Items
	p.ClusterRoles, p.ClusterRoleBindings = clusterRoles.Items, clusterRoleBindings.Items
	return p
}
