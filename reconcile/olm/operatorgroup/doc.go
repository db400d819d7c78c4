// Package operatorgroup is the OperatorGroup controller of olmsync's embedded OLM: for each
// group it resolves the target namespaces into status.namespaces ([""] for a global group) with
// lastUpdated, reports a missing service account and several groups in one namespace with OLM's
// conditions, labels the target namespaces of a non-global group with
// olm.operatorgroup.uid/<uid>, keeps the three aggregated ClusterRoles olm.og.<group>.admin-<hash>, edit and
// view (named per group as OLM names them, aggregating the per-API roles of every API its
// namespace's CSVs own), and prunes olm.providedAPIs of APIs no member provides any more — each decision taken
// by the pure rules of olm/groups. What a group does to its member CSVs (annotations,
// copies, generated RBAC) is the CSV controller's, which watches groups for it. It writes only
// the status and the annotation, namespace labels and ClusterRoles OLM writes.
package operatorgroup
