// Package olm is the pure decision core of olmsync's embedded OLM, shared by the offline
// check (check/preview) and the controllers (reconcile/olm):
//
//   - catalog: catalogs (FBC, package manifests, ConfigMap catalogs, bundle images) loaded
//     into channels and upgrade graphs, validated with OLM's messages;
//   - resolve: which bundle a Subscription gets, with its dependencies, as OLM's resolver
//     decides it, and the InstallPlan steps that follow;
//   - groups: OperatorGroup membership, target namespaces, install modes, provided APIs and
//     the generated ClusterRoles' names;
//   - phase: a ClusterServiceVersion's phase and reason from its requirements and install;
//   - install: what a CSV's "deployment" install strategy makes and whether it is healthy;
//   - crdupgrade: whether OLM lets a CRD update through;
//   - rbac: what a scoped install's ServiceAccount may do, as Kubernetes' RBAC authorizer
//     decides it, and the first step of a plan it may not execute.
//
// These packages are plain Go over plain data, table-tested, with no Kubernetes client:
// olm/ imports neither check/ nor reconcile/ (internal/archtest holds the rule).
package olm
