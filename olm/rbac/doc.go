// Package rbac decides, over plain Roles, ClusterRoles, RoleBindings and ClusterRoleBindings,
// whether a user may make a request, as Kubernetes' RBAC authorizer decides it, and says a
// refusal in the API server's words. The InstallPlan controller executes a scoped install
// (an OperatorGroup with spec.serviceAccountName) with the account's rights and the API
// server refuses what RBAC does not allow; the offline preview asks this package the same
// question over the RBAC objects it has (Git, the live cluster), so that both predict the
// same step to be refused with the same message.
package rbac
