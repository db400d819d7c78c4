// Package applier writes what a CSV's install strategy makes: the ServiceAccounts, Roles,
// RoleBindings, ClusterRoles, ClusterRoleBindings and Deployments that olm/install says a
// ClusterServiceVersion needs, created or updated through a controller-runtime client, and
// the Deployments a CSV no longer lists removed. It is the write half of the install
// strategy; the decisions (names, labels, owner references, hashes, health) stay in the pure
// olm/install package, which the offline check calls too.
package applier
