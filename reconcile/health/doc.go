// Package health tells, as a pure function of objects read from the cluster, whether each
// object a Sync applied is what it should be: Healthy, Progressing, Degraded, Suspended,
// Missing, Unknown, or — OLM's own case — WaitingForApproval.
//
// OLM's kinds are judged as OLM means them: a Subscription is Healthy only at
// AtLatestKnown with its installed CSV Succeeded; one whose InstallPlan waits for a
// Manual approval is WaitingForApproval, neither healthy nor failed; a CSV follows its
// phase and reason, an InstallPlan its phase, a CatalogSource its registry connection.
// Reasons are OLM's own strings (ConstraintsNotSatisfiable, InstallCheckFailed…).
//
// Every other kind follows kstatus's rules (sigs.k8s.io/cli-utils/pkg/kstatus, which is
// not in olmsync's module graph, so this is a minimal equivalent): a deletion under way or
// a status.observedGeneration behind metadata.generation is Progressing; Deployments,
// StatefulSets, DaemonSets and ReplicaSets by their replica counts, Jobs, CronJobs, Pods,
// PersistentVolumeClaims, Services and CRDs by their status; anything else by the
// conventional Ready, Reconciling and Stalled conditions, and Healthy when it reports none
// (kstatus's "Current"), since most kinds have no status to wait for.
package health
