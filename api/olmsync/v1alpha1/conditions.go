package v1alpha1

import "github.com/fluxcd/pkg/apis/meta"

// The condition types of a Sync. Ready, Reconciling and Stalled are kstatus's (Flux's
// strings); the others are negative-polarity and each is owned by one step of the
// reconciler, present only while that step fails.
const (
	ReadyCondition       = meta.ReadyCondition
	ReconcilingCondition = meta.ReconcilingCondition
	StalledCondition     = meta.StalledCondition

	// FetchFailedCondition: the repository could not be fetched; the last good
	// revision stays applied.
	FetchFailedCondition = "FetchFailed"
	// BuildFailedCondition: an app (or olmsync.yaml) could not be rendered; nothing is
	// pruned.
	BuildFailedCondition = "BuildFailed"
	// PolicyViolationCondition: objects break a placement rule; in enforce mode they
	// are not applied.
	PolicyViolationCondition = "PolicyViolation"
	// ApplyFailedCondition: an object could not be applied.
	ApplyFailedCondition = "ApplyFailed"
	// PruneFailedCondition: an object that is no longer rendered could not be deleted.
	PruneFailedCondition = "PruneFailed"
	// HealthCheckFailedCondition: an applied object is Degraded or Missing, or still on
	// its way when spec.timeout has passed.
	HealthCheckFailedCondition = "HealthCheckFailed"
	// DependencyNotReadyCondition: a Sync of spec.dependsOn is not Ready (or the
	// dependencies form a cycle); nothing is fetched, applied or pruned.
	DependencyNotReadyCondition = "DependencyNotReady"
)

// The condition reasons of a Sync, PascalCase.
const (
	// ReconciliationSucceededReason: the revision is applied and every app is healthy.
	ReconciliationSucceededReason = meta.ReconciliationSucceededReason
	// ProgressingReason: a reconcile is under way.
	ProgressingReason = meta.ProgressingReason
	// ProgressingWithRetryReason: the last attempt failed and will be retried.
	ProgressingWithRetryReason = meta.ProgressingWithRetryReason
	// SuspendedReason: spec.suspend is true.
	SuspendedReason = meta.SuspendedReason

	// InvalidSpecReason: the spec can never work as written (a bad URL or ref); Stalled.
	InvalidSpecReason = "InvalidSpec"
	// SecretNotFoundReason: spec.source.secretRef names a missing Secret, or one
	// without usable keys.
	SecretNotFoundReason = "SecretNotFound"
	// ServiceAccountNotFoundReason: spec.serviceAccountName names a missing account.
	ServiceAccountNotFoundReason = "ServiceAccountNotFound"

	// GitUnreachableReason: the git server could not be reached or did not answer.
	GitUnreachableReason = "GitUnreachable"
	// AuthenticationFailedReason: the git server refused the credentials.
	AuthenticationFailedReason = "AuthenticationFailed"
	// RevisionNotFoundReason: the branch, tag, semver range or commit is not there.
	RevisionNotFoundReason = "RevisionNotFound"
	// FetchFailedReason: any other fetch failure.
	FetchFailedReason = "FetchFailed"

	// BuildFailedReason: rendering failed (kustomize, malformed YAML, olmsync.yaml), or
	// the Secret of spec.decryption could not be read or holds a malformed identity
	// (Flux's reason for both).
	BuildFailedReason = meta.BuildFailedReason
	// PluginSkippedReason: an app rendered without a generator whose kustomize plugin
	// (exec or container) is off, so what the generator makes is missing; the build is
	// incomplete and nothing is applied or pruned. The message names the generator, its
	// file and line.
	PluginSkippedReason = "PluginSkipped"
	// PolicyViolationReason: a placement rule is broken.
	PolicyViolationReason = "PolicyViolation"
	// ApplyFailedReason: the API server refused an object.
	ApplyFailedReason = "ApplyFailed"
	// WaitingForCRDReason: a custom resource waits for its CustomResourceDefinition (one
	// an operator of this Sync is about to install) to be established.
	WaitingForCRDReason = "WaitingForCRD"
	// PruneFailedReason: an object could not be deleted.
	PruneFailedReason = meta.PruneFailedReason
	// PruneRefusedReason: the revision would delete every object of the Sync, or more
	// than spec.pruneOptions.maxDeletions, and the Sync does not allow it; nothing was
	// deleted.
	PruneRefusedReason = "PruneRefused"
	// PrunedReason: the Event of a prune that deleted objects.
	PrunedReason = "Pruned"
	// NonFastForwardReason: the Event of a revision that is not a descendant of the one
	// applied before it (status.lastRevisionChange says which way it moved).
	NonFastForwardReason = "NonFastForward"
	// HealthCheckFailedReason: an object is Degraded or Missing.
	HealthCheckFailedReason = meta.HealthCheckFailedReason
	// WaitingForApprovalReason: an InstallPlan waits for a Manual approval.
	WaitingForApprovalReason = "WaitingForApproval"
	// DependencyNotReadyReason: a Sync of spec.dependsOn is not Ready, missing, or part
	// of a cycle.
	DependencyNotReadyReason = meta.DependencyNotReadyReason
	// KubeConfigInvalidReason: the Secret of spec.kubeConfig is missing, holds no
	// kubeconfig, or one olmsync refuses (a program to run, a file to read).
	KubeConfigInvalidReason = "KubeConfigInvalid"
	// SubstituteFailedReason: a ConfigMap or Secret of spec.postBuild.substituteFrom
	// could not be read.
	SubstituteFailedReason = "SubstituteFailed"
)

// Annotations and labels olmsync reads and writes.
const (
	// ReconcileRequestAnnotation asks for a reconcile now when its value changes (the
	// webhook receiver and `olmsync reconcile sync` set it to the time), like Flux's
	// reconcile.fluxcd.io/requestedAt.
	ReconcileRequestAnnotation = "reconcile.olmsync.dev/requestedAt"

	// SyncNameLabel and SyncNamespaceLabel are put on every object a Sync applies. Prune
	// deletes an object only when they still name the Sync pruning it.
	SyncNameLabel      = "olmsync.dev/sync-name"
	SyncNamespaceLabel = "olmsync.dev/sync-namespace"

	// PruneAnnotation set to PruneDisabled on an object (in Git or in the cluster) keeps
	// it when it is no longer rendered.
	PruneAnnotation = "olmsync.dev/prune"
	PruneDisabled   = "disabled"

	// FieldManager is the server-side apply field manager of everything olmsync applies.
	FieldManager = "olmsync"

	// WebhookGitHubTokenKey and WebhookGitLabTokenKey are the keys of the webhook Secret
	// holding each provider's secret: GitHub's HMAC key, GitLab's token. One key per
	// provider, so that a GitLab token (sent as it is in every request, readable by
	// whoever sees the request) is never also the key of GitHub's signatures.
	WebhookGitHubTokenKey = "github-token"
	WebhookGitLabTokenKey = "gitlab-token"
	// WebhookTokenKey is the key every provider's secret was read from before there was
	// a key per provider. It is still read, for a provider whose own key is missing,
	// with a deprecation warning in the log.
	WebhookTokenKey = "token"
)
