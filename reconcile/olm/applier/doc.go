// Package applier writes what a CSV's install strategy makes: the ServiceAccounts, Roles,
// RoleBindings, ClusterRoles, ClusterRoleBindings and Deployments that olm/install says a
// ClusterServiceVersion needs, and for its webhooks and owned API services the Services,
// serving-certificate Secrets (kept until due for rotation), webhook configurations, CRD
// conversions and APIServices, created or updated through a controller-runtime client (the
// kinds the manager does not cache read from the API server), and the Deployments and
// webhook configurations a CSV no longer lists removed. It is the write half of the install
// strategy; the decisions (names, labels, owner references, hashes, health) stay in the pure
// olm/install package, which the offline check calls too.
package applier
