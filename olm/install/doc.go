// Package install is the "deployment" install strategy of a ClusterServiceVersion: what a
// CSV's spec.install makes in the cluster and how to tell whether it is healthy. The pure
// half says which ServiceAccounts, Roles and RoleBindings (from permissions), ClusterRoles
// and ClusterRoleBindings (from clusterPermissions) and Deployments a CSV needs, with OLM's
// names, owner references and labels (olm.owner*, olm.managed, olm.deployment-spec-hash,
// olm.permissions.hash), the CSV's annotations projected into the pod templates and
// OPERATOR_CONDITION_NAME in every container; and it judges existing Deployments with OLM's
// readiness rules (observedGeneration caught up, no outdated replicas, Available=True) and
// drift checks (spec hash, pod-template annotations), returning OLM's messages verbatim.
// It is pure: the write half, reconcile/olm/applier, creates or updates those objects
// through a controller-runtime client. The CSV controller calls both; the offline check
// calls this package alone.
package install
