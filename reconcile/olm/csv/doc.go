// Package csv is the ClusterServiceVersion controller of olmsync's embedded OLM (the "OLM
// operator" half of OLM, seed 002): it takes a CSV from wherever it came — an InstallPlan, or
// Git straight away — through OLM's phases Pending, InstallReady, Installing and Succeeded
// (and Failed, Replacing, Deleting) with OLM's reasons and messages, deciding each step with
// the pure OperatorGroup rules (olm/groups) and phase machine (olm/phase)
// and acting on the cluster for them: the CSV's membership annotations and provided-API
// labels, its group's olm.providedAPIs, the service accounts, RBAC and Deployments of its
// install strategy (olm/install), the serving certificates, Services, webhook
// configurations, CRD conversions and APIServices of its webhooks and owned API services
// (rotated before they expire), the ClusterRoles and RBAC its group generates for
// it, its copies in the group's target namespaces, Events on every phase change, the CSV
// metrics, and its cleanup when it is deleted (finalizer operators.coreos.com/csv-cleanup).
// It writes only the status, finalizer, annotations and labels OLM writes on a CSV; it never
// changes a CSV's spec.
package csv
