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
// Every other kind is judged by kstatus (github.com/fluxcd/cli-utils/pkg/kstatus, Flux's
// fork of sigs.k8s.io/cli-utils, which Flux and Argo CD share): Current is Healthy, InProgress and Terminating Progressing,
// Failed Degraded. On top come the few rules of Argo CD's that kstatus has no word for
// (builtin.go): a paused Deployment and a suspended Job or CronJob are Suspended, a
// container waiting on an image pull or a bad config and a claim whose volume is lost are
// Degraded.
package health
