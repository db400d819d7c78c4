// Package groups holds OLM's OperatorGroup rules as plain functions over the API types, shared
// by the embedded OLM controllers and the offline `check` preview so that both decide alike:
// which namespaces a group targets, whether a CSV is a member and which annotations it gets,
// whether its install modes support the group's target set, which APIs it provides and what the
// provided-API intersection with other groups does to it and to its group's olm.providedAPIs
// annotation, the ClusterRoles, Roles and RoleBindings a group and its members generate, the
// copied CSVs in target namespaces (and which existing copies are dangling), and the annotations
// projected onto an operator's pods. Nothing here talks to an API server: callers pass in what
// they read from the cluster or rendered from Git, and apply what comes back. The behaviour is
// seed 000's (the OperatorGroups documentation) where it speaks, and OLM's code
// (../shared/olm-behaviour.md section 4) where it is silent; the status messages are OLM's, verbatim.
package groups
