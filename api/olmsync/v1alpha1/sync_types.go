package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// SyncKind is the kind of a Sync.
const SyncKind = "Sync"

// SyncSpec says which repository to follow, which of its apps to deploy and how.
type SyncSpec struct {
	// Source is the Git repository and the revision of it to follow.
	Source GitSource `json:"source"`

	// Path is the folder of the repository that holds the apps, relative to its root
	// ("./clusters/prod"); empty is the root. The Sync reads nothing outside it:
	// olmsync.yaml, apps and rule folders are the folder's own.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="the path must stay inside the repository"
	Path string `json:"path,omitempty"`

	// Cluster names the cluster whose apps this Sync deploys, as `olmsync check` names
	// clusters: olmsync.yaml's cluster of an app, or an Argo CD Application's destination
	// name (else server). Empty means the apps without a cluster, and Argo CD
	// Applications whose destination is the in-cluster server.
	// +optional
	Cluster string `json:"cluster,omitempty"`

	// Apps lists the names of the apps to deploy (as `olmsync apps` shows them). Empty
	// means every app of the cluster, discovered exactly as `olmsync check` discovers them.
	// +optional
	// +listType=set
	Apps []string `json:"apps,omitempty"`

	// Policy says how strictly the placement rules gate what is applied.
	// +kubebuilder:default={}
	// +optional
	Policy PolicySpec `json:"policy,omitzero"`

	// Prune deletes the objects this Sync applied before and no longer renders. Only
	// objects in the Sync's inventory are ever deleted, and never after a fetch or a
	// render that failed. It stays a boolean, as Flux's Kustomization has it, so that
	// every Sync written so far keeps working; PruneOptions bound what it may do.
	Prune bool `json:"prune"`

	// PruneOptions bound prune: how many objects one revision may delete, whether it
	// may delete every one, and what pruning a Subscription takes with it.
	// +kubebuilder:default={}
	// +optional
	PruneOptions PruneOptions `json:"pruneOptions,omitzero"`

	// Interval is how often the applied objects are compared with the repository and
	// drift is corrected, even when the revision has not changed.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	Interval metav1.Duration `json:"interval"`

	// Suspend stops reconciliation; nothing is fetched, applied or pruned until it is
	// set back to false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// ServiceAccountName is the service account, in the Sync's namespace, that olmsync
	// impersonates to apply and prune; the Sync can then do no more than the account may.
	// Empty means olmsync's own identity.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// Webhook lets a Git server trigger a reconcile at /hooks/<namespace>/<name>.
	// +optional
	Webhook *WebhookSpec `json:"webhook,omitempty"`

	// DependsOn lists Syncs that must be Ready (for their current generation) before
	// this one fetches, builds or applies anything, as a Flux Kustomization's dependsOn.
	// The namespace defaults to this Sync's. A cycle is refused (DependencyNotReady,
	// naming the cycle).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	DependsOn []DependencyReference `json:"dependsOn,omitempty"`

	// RetryInterval is how long to wait after a failed reconcile before trying again;
	// default: olmsync run's (30s), never more than Interval.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	RetryInterval *metav1.Duration `json:"retryInterval,omitempty"`

	// Timeout bounds the wait for the applied objects to become healthy after a revision
	// is applied: once it has passed, objects still on their way make the Sync
	// Ready=False with reason HealthCheckFailed. Default: wait as long as they progress.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// TargetNamespace moves every namespaced object of the Sync's apps into this
	// namespace (kustomize's namespace transformer), before the placement rules see them.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	TargetNamespace string `json:"targetNamespace,omitempty"`

	// Patches are kustomize patches (strategic merge or JSON 6902) applied to the objects
	// of the Sync's apps, each to the objects its target selects.
	// +optional
	Patches []Patch `json:"patches,omitempty"`

	// CommonMetadata sets labels and annotations on every object's metadata (not on
	// selectors or pod templates).
	// +optional
	CommonMetadata *CommonMetadata `json:"commonMetadata,omitempty"`

	// Force recreates an object whose change the API server refuses because a field is
	// immutable (a Job's template, a Service's clusterIP, an immutable ConfigMap), as a
	// Flux Kustomization's force. An object annotated kustomize.toolkit.fluxcd.io/force:
	// enabled is recreated whatever this says.
	// +optional
	Force bool `json:"force,omitempty"`

	// KubeConfig makes the Sync apply to another cluster: the Secret's kubeconfig (key
	// "value", else "value.yaml") connects to it, as a Flux Kustomization's kubeConfig.
	// serviceAccountName, when set, is impersonated on that cluster. The inventory and
	// status stay on this Sync; olmsync's embedded OLM stays on its own cluster. A
	// kubeconfig that runs a program (exec, auth-provider) or reads a file of olmsync's
	// filesystem is refused.
	// +optional
	KubeConfig *KubeConfigReference `json:"kubeConfig,omitempty"`

	// Notify posts what the Sync did with each revision as a commit status on the forge
	// the repository lives on (GitHub or GitLab), so the author of a merged change sees it
	// on the commit and its pull request.
	// +optional
	Notify *NotifySpec `json:"notify,omitempty"`

	// PostBuild substitutes variables in the built objects, as a Flux Kustomization's
	// postBuild: ${var}, ${var:=default}; an object annotated
	// kustomize.toolkit.fluxcd.io/substitute: disabled is left alone.
	// +optional
	PostBuild *PostBuild `json:"postBuild,omitempty"`

	// Decryption decrypts SOPS-encrypted Secrets and secretGenerator sources of the
	// Sync's apps with the age identities of a Secret, as a Flux Kustomization's
	// decryption does. Decrypted values go to the API server only: never into status,
	// events, logs or diffs. Without it, a SOPS-encrypted Secret is refused.
	// +optional
	Decryption *Decryption `json:"decryption,omitempty"`
}

// Decryption names how and with which keys a Sync decrypts.
type Decryption struct {
	// Provider is sops (the only one, as in Flux).
	// +kubebuilder:validation:Enum=sops
	Provider string `json:"provider"`
	// SecretRef names a Secret in the Sync's namespace: each key whose name ends in
	// .agekey holds age identities, one per line (Flux's keys). Flux's other keys (.asc,
	// sops.vault-token, cloud credentials) are not read: olmsync decrypts with age only.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// DecryptionProviderSOPS is the provider of spec.decryption.
const DecryptionProviderSOPS = "sops"

// KubeConfigReference names the Secret holding a kubeconfig.
type KubeConfigReference struct {
	SecretRef SecretKeyReference `json:"secretRef"`
}

// SecretKeyReference is a key of a Secret in the Sync's namespace.
type SecretKeyReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key is the data key; default "value", else "value.yaml" (Flux's keys).
	// +optional
	Key string `json:"key,omitempty"`
}

// NotifySpec says where commit statuses go.
type NotifySpec struct {
	// Provider is the forge's API: github (github.com or a GitHub Enterprise Server) or
	// gitlab.
	// +kubebuilder:validation:Enum=github;gitlab
	Provider string `json:"provider"`
	// Address is the repository's URL on the forge; default spec.source.url.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Address string `json:"address,omitempty"`
	// APIURL is the API's base URL; default https://api.github.com for github.com,
	// https://<host>/api/v3 for another GitHub host, https://<host>/api/v4 for GitLab.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	APIURL string `json:"apiURL,omitempty"`
	// SecretRef names a Secret in the Sync's namespace whose key "token" is a token
	// allowed to write commit statuses.
	SecretRef LocalObjectReference `json:"secretRef"`
	// TargetURL, when set, is the link of every status (a dashboard).
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	TargetURL string `json:"targetURL,omitempty"`
}

// CommitStatus is the last commit status posted (or tried) for a Sync.
type CommitStatus struct {
	// Revision is the revision the status is about.
	Revision string `json:"revision"`
	// State is pending, success or failure.
	State string `json:"state"`
	// Description is what the status says.
	Description string `json:"description,omitempty"`
	// Error is why the forge did not take it; empty when it did.
	// +optional
	Error string `json:"error,omitempty"`
}

// DependencyReference names another Sync.
type DependencyReference struct {
	// Name of the Sync.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace of the Sync; default: this Sync's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// Patch is a kustomize patch and the objects it applies to (Flux's kustomize.Patch).
type Patch struct {
	// Patch is a strategic merge patch or a JSON 6902 patch, written inline.
	// +kubebuilder:validation:MinLength=1
	Patch string `json:"patch"`
	// Target selects the objects to patch; empty: the object the strategic merge patch
	// names.
	// +optional
	Target *Selector `json:"target,omitempty"`
}

// Selector selects objects as a kustomize patch target does.
type Selector struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// Name is a regular expression matched against the object's name.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace is a regular expression matched against the object's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// AnnotationSelector is a label-selector expression over the object's annotations.
	// +optional
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	// LabelSelector is a label-selector expression over the object's labels.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// CommonMetadata is metadata set on every object of the Sync.
type CommonMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PostBuild is the variable substitution after the build.
type PostBuild struct {
	// Substitute maps variable names to values.
	// +optional
	Substitute map[string]string `json:"substitute,omitempty"`
	// SubstituteFrom reads further variables from the data of ConfigMaps and Secrets in
	// the Sync's namespace, in order; a later one overrides an earlier one, and
	// Substitute overrides them all. Secret values are used, never stored or logged.
	// +optional
	SubstituteFrom []SubstituteReference `json:"substituteFrom,omitempty"`
}

// SubstituteReference names a ConfigMap or Secret holding variables.
type SubstituteReference struct {
	// Kind is ConfigMap or Secret.
	// +kubebuilder:validation:Enum=ConfigMap;Secret
	Kind string `json:"kind"`
	// Name of the object, in the Sync's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Optional: a missing object is no error (its variables are unset).
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// GitSource is a Git repository and the revision of it to follow.
type GitSource struct {
	// URL is the repository: https://, http://, ssh://, or scp-like user@host:path.
	// file:// URLs are accepted only when olmsync runs with local sources enabled.
	// Credentials never go in it (it is shown by `kubectl get syncs`): a password, any
	// userinfo of an http(s) URL, or a query parameter that names a token, key,
	// password, secret, signature or credential (?private_token=, ?access_token=) is
	// refused; put them in the Secret SecretRef names.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern="^((https?|ssh|file)://.+|[^@/:\\s]+@[^:/\\s]+:.+)$"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#@]*:[^/?#]*@') && !self.matches('(?i)^https?://[^/?#]*@') && !self.matches('(?i)[?&][^=&#]*(token|key|pass|secret|sig|auth|cred)[^=&#]*=')",message="spec.source.url must not carry credentials (a password, http(s) userinfo, or a token in its query): put them in a Secret named by spec.source.secretRef"
	URL string `json:"url"`

	// Ref is the branch, tag, semver range or commit to follow; the remote's default
	// branch when unset.
	// +optional
	Ref *GitRef `json:"ref,omitempty"`

	// Interval is how often the repository is fetched for a new revision.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	Interval metav1.Duration `json:"interval"`

	// Timeout bounds one fetch; 60s when unset.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// SecretRef names a Secret in the Sync's namespace holding the credentials, with
	// Flux's keys: "username" and "password" (basic auth, or a token as the password),
	// "bearerToken", "ca.crt", or for ssh "identity" (a private key, "password" then being
	// its passphrase) and "known_hosts".
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
}

// GitRef selects a revision. At most one of tag, semver and commit is set; a branch goes
// alone or with a commit (the branch is then fetched to find the commit).
// +kubebuilder:validation:XValidation:rule="(has(self.tag) ? 1 : 0) + (has(self.semver) ? 1 : 0) + (has(self.commit) ? 1 : 0) <= 1",message="set at most one of tag, semver and commit"
// +kubebuilder:validation:XValidation:rule="!has(self.branch) || !(has(self.tag) || has(self.semver))",message="a branch goes only with a commit"
type GitRef struct {
	// Branch to follow.
	// +optional
	// +kubebuilder:validation:MinLength=1
	Branch string `json:"branch,omitempty"`
	// Tag to follow.
	// +optional
	// +kubebuilder:validation:MinLength=1
	Tag string `json:"tag,omitempty"`
	// SemVer is a range over the repository's tags in blang/semver syntax (OLM's
	// skipRange syntax), e.g. ">=1.2.0 <2.0.0"; the highest matching tag is followed.
	// +optional
	// +kubebuilder:validation:MinLength=1
	SemVer string `json:"semver,omitempty"`
	// Commit is a full hexadecimal commit hash to pin.
	// +optional
	// +kubebuilder:validation:Pattern="^[0-9a-f]{40}([0-9a-f]{24})?$"
	Commit string `json:"commit,omitempty"`
}

// PruneOptions bound what one prune may delete.
type PruneOptions struct {
	// AllowEmpty lets a revision delete every object the Sync applied (a revision that
	// renders none of them, e.g. nothing at all). Without it such a prune is refused
	// (PruneFailed, reason PruneRefused), as Argo CD refuses an empty sync unless
	// allowEmpty is set: an emptied revision is far more often a mistake than a wish.
	// Deleting the Sync still prunes everything.
	// +optional
	AllowEmpty bool `json:"allowEmpty,omitempty"`

	// MaxDeletions bounds how many objects one revision may delete: a count ("25"), or
	// a percentage of the objects the Sync applied ("30%"). A prune that would delete
	// more is refused, deleting nothing (PruneFailed, reason PruneRefused). Unset: no
	// bound but AllowEmpty's.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^[0-9]+%$') && int(self.replace('%', '')) <= 100",message="maxDeletions is a count (0 or more) or a percentage (0% to 100%)"
	MaxDeletions *intstr.IntOrString `json:"maxDeletions,omitempty"`

	// Operators says what pruning a Subscription does with the operator it installed:
	// Delete (the default) deletes the Subscription's installed CSV as well, and with it
	// what OLM removes with a CSV, so that `git revert` of the commit that removed the
	// Subscription brings the operator back; Keep leaves the CSV running, as OLM does
	// when a Subscription is deleted.
	// +kubebuilder:default=Delete
	// +optional
	Operators PruneOperatorsPolicy `json:"operators,omitempty"`
}

// PruneOperatorsPolicy is what pruning a Subscription does with its operator.
// +kubebuilder:validation:Enum=Delete;Keep
type PruneOperatorsPolicy string

const (
	// PruneOperatorsDelete deletes the installed CSV of a pruned Subscription.
	PruneOperatorsDelete PruneOperatorsPolicy = "Delete"
	// PruneOperatorsKeep leaves the installed CSV of a pruned Subscription in place.
	PruneOperatorsKeep PruneOperatorsPolicy = "Keep"
)

// PolicyMode is how the placement rules gate what is applied.
// +kubebuilder:validation:Enum=enforce;audit
type PolicyMode string

const (
	// PolicyModeEnforce applies everything except the objects that break a rule (an
	// unwaived error), and sets Ready=False with reason PolicyViolation.
	PolicyModeEnforce PolicyMode = "enforce"
	// PolicyModeAudit applies everything and reports the violations.
	PolicyModeAudit PolicyMode = "audit"
)

// PolicySpec says how the placement rules are used.
type PolicySpec struct {
	// Mode is enforce (the default) or audit.
	// +kubebuilder:default=enforce
	// +optional
	Mode PolicyMode `json:"mode,omitempty"`
	// Rules are further folders of Rego rules in the repository, relative to its root,
	// evaluated with the built-in rules and the folders olmsync.yaml lists.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	Rules []RuleFolder `json:"rules,omitempty"`
}

// RuleFolder is a folder of the repository, relative to its root, that cannot leave it.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=512
// +kubebuilder:validation:Pattern="^[^/]"
// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="rule folders must stay inside the repository"
type RuleFolder string

// WebhookSpec configures the webhook receiver of a Sync.
type WebhookSpec struct {
	// SecretRef names a Secret in the Sync's namespace holding one key per provider:
	// "github-token", the HMAC key of GitHub's X-Hub-Signature-256, and "gitlab-token",
	// GitLab's X-Gitlab-Token. The key "token" of earlier versions is still read for a
	// provider without its own key (deprecated).
	SecretRef LocalObjectReference `json:"secretRef"`
}

// LocalObjectReference names an object in the Sync's namespace.
type LocalObjectReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// SyncStatus is what olmsync last did for the Sync and what it found.
type SyncStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready always; Reconciling and Stalled only while true; and one
	// negative-polarity condition per failing step (FetchFailed, BuildFailed,
	// PolicyViolation, ApplyFailed, PruneFailed, HealthCheckFailed).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// LastHandledReconcileAt is the value of the reconcile.olmsync.dev/requestedAt
	// annotation last handled.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// LastFetchedRevision is the revision last fetched, as "<branch or tag>@sha1:<hex>".
	// +optional
	LastFetchedRevision string `json:"lastFetchedRevision,omitempty"`
	// LastAppliedRevision is the revision whose objects were last applied in full.
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`
	// LastAppliedCommit is the commit of LastAppliedRevision: its subject and author, for
	// people (the dashboard, `kubectl get -o yaml`) who know a change by its message.
	// +optional
	LastAppliedCommit *CommitMetadata `json:"lastAppliedCommit,omitempty"`

	// History is the last reconciles that applied, or that ended otherwise than the one
	// before, newest first, at most MaxHistory of them. Reconciles in a row of the same
	// revision with the same result are one entry, counted, as Flux's status.history.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	History []ReconcileSnapshot `json:"history,omitempty"`

	// Inventory is every object this Sync applied, or began to apply: the objects of a
	// revision are added before its apply starts, so that an apply cut short leaves
	// nothing prune cannot see. Prune deletes only from it.
	// +optional
	Inventory *ResourceInventory `json:"inventory,omitempty"`

	// LastPrune is what the last prune that had objects to delete did: how many were
	// deleted, kept, failed, or refused by spec.pruneOptions.
	// +optional
	LastPrune *PruneSummary `json:"lastPrune,omitempty"`

	// LastRevisionChange says how the revision last applied relates to the one applied
	// before it: a fast-forward, or a branch that moved backwards or to an unrelated
	// history (a force-push), which deletes what the newer commits had added.
	// +optional
	LastRevisionChange *RevisionChange `json:"lastRevisionChange,omitempty"`

	// LastCommitStatus is the last commit status spec.notify posted, or tried to.
	// +optional
	LastCommitStatus *CommitStatus `json:"lastCommitStatus,omitempty"`

	// Apps is the sync status and health of each app.
	// +optional
	// +listType=map
	// +listMapKey=name
	Apps []AppStatus `json:"apps,omitempty"`

	// Violations are the placement-rule findings of the last fetched revision, at most
	// MaxViolations of them (ViolationCount says how many there were).
	// +optional
	Violations []PolicyViolation `json:"violations,omitempty"`
	// ViolationCount is the number of violations found, waived ones excluded.
	// +optional
	ViolationCount int `json:"violationCount,omitempty"`
}

// MaxViolations bounds status.violations, MaxAppResources each app's list of objects
// that are not Synced and Healthy, and MaxHistory status.history, so that the status of a
// large repository stays far below the API server's object size limit.
const (
	MaxViolations   = 100
	MaxAppResources = 50
	MaxHistory      = 10
)

// MaxCommitSubject bounds the commit subject kept in status.lastAppliedCommit.
const MaxCommitSubject = 256

// CommitMetadata says who made a commit and why.
type CommitMetadata struct {
	// Subject is the first line of the commit message, at most MaxCommitSubject bytes.
	// +optional
	Subject string `json:"subject,omitempty"`
	// Author is the commit author's name (not the address).
	// +optional
	Author string `json:"author,omitempty"`
	// Time is the author's date.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
}

// ReconcileSnapshot is one run of reconciles of a revision with the same result.
type ReconcileSnapshot struct {
	// Revision is the revision reconciled (LastAppliedRevision when the fetch failed).
	Revision string `json:"revision"`
	// FirstReconciled and LastReconciled are when the first and the last reconcile of
	// the run started.
	FirstReconciled metav1.Time `json:"firstReconciled"`
	LastReconciled  metav1.Time `json:"lastReconciled"`
	// LastReconciledDuration is how long the last reconcile of the run took.
	LastReconciledDuration metav1.Duration `json:"lastReconciledDuration"`
	// LastReconciledStatus is the reason of Ready at its end (ReconciliationSucceeded,
	// a failing step's reason, WaitingForApproval, Progressing, Suspended).
	LastReconciledStatus string `json:"lastReconciledStatus"`
	// Applied: the last reconcile of the run applied the revision's objects.
	// +optional
	Applied bool `json:"applied,omitempty"`
	// TotalReconciles counts the reconciles of the run.
	TotalReconciles int64 `json:"totalReconciles"`
}

// PruneSummary is what one prune did.
type PruneSummary struct {
	// Revision is the revision whose apply the prune followed.
	Revision string `json:"revision"`
	// Stale is how many objects of the inventory the revision no longer renders.
	Stale int `json:"stale"`
	// Deleted, Gone (already deleted by someone else), Kept (opted out, or no longer
	// labelled as this Sync's), Failed (the API server refused) and Refused
	// (spec.pruneOptions refused the whole prune) count the stale objects by outcome.
	// +optional
	Deleted int `json:"deleted,omitempty"`
	// +optional
	Gone int `json:"gone,omitempty"`
	// +optional
	Kept int `json:"kept,omitempty"`
	// +optional
	Failed int `json:"failed,omitempty"`
	// +optional
	Refused int `json:"refused,omitempty"`
	// Message says why a prune was refused or failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// RevisionRelation is how a revision relates to the one applied before it.
// +kubebuilder:validation:Enum=FastForward;Backward;Unrelated;Unknown
type RevisionRelation string

const (
	// RevisionFastForward: the new revision descends from the last applied one.
	RevisionFastForward RevisionRelation = "FastForward"
	// RevisionBackward: the new revision is an ancestor of the last applied one; the
	// branch was reset (or force-pushed) to an older commit.
	RevisionBackward RevisionRelation = "Backward"
	// RevisionUnrelated: neither descends from the other (a force-push of another history).
	RevisionUnrelated RevisionRelation = "Unrelated"
	// RevisionUnknown: the history between them is not in the cache (branches are fetched
	// shallow), so which it is cannot be told.
	RevisionUnknown RevisionRelation = "Unknown"
)

// RevisionChange is one change of the applied revision.
type RevisionChange struct {
	// From is the revision applied before; To the one applied now.
	From string `json:"from"`
	To   string `json:"to"`
	// Relation is how To relates to From.
	Relation RevisionRelation `json:"relation"`
}

// ResourceInventory lists the objects a Sync applied.
type ResourceInventory struct {
	// Entries are the objects, sorted by ID.
	Entries []ResourceRef `json:"entries"`
}

// ResourceRef is one object of an inventory.
type ResourceRef struct {
	// ID is "<namespace>_<name>_<group>_<kind>", as Flux writes it; the namespace is
	// empty for cluster-scoped objects and the group for the core group.
	ID string `json:"id"`
	// Version is the API version the object was applied with.
	Version string `json:"v"`
}

// SyncStatusCode says whether the cluster matches the repository.
// +kubebuilder:validation:Enum=Synced;OutOfSync;Unknown
type SyncStatusCode string

const (
	// SyncStatusSynced: every object of the app is applied and matches the repository.
	SyncStatusSynced SyncStatusCode = "Synced"
	// SyncStatusOutOfSync: an object differs from the repository, is missing, or was not
	// applied (gated by a rule, waiting for its CRD, failed).
	SyncStatusOutOfSync SyncStatusCode = "OutOfSync"
	// SyncStatusUnknown: the app could not be rendered, so nothing can be compared.
	SyncStatusUnknown SyncStatusCode = "Unknown"
)

// HealthStatusCode is the health of an object or an app, OLM-aware.
// +kubebuilder:validation:Enum=Healthy;Progressing;Degraded;Suspended;Missing;Unknown;WaitingForApproval
type HealthStatusCode string

const (
	// HealthHealthy: the object is what it should be (a Subscription at AtLatestKnown
	// with its CSV Succeeded, a CSV Succeeded, an InstallPlan Complete).
	HealthHealthy HealthStatusCode = "Healthy"
	// HealthProgressing: not yet healthy, and getting there on its own.
	HealthProgressing HealthStatusCode = "Progressing"
	// HealthDegraded: failed, or cannot get there without a change.
	HealthDegraded HealthStatusCode = "Degraded"
	// HealthSuspended: paused on purpose (a suspended CronJob or Job, a paused Deployment).
	HealthSuspended HealthStatusCode = "Suspended"
	// HealthMissing: the object does not exist in the cluster.
	HealthMissing HealthStatusCode = "Missing"
	// HealthUnknown: its health cannot be told.
	HealthUnknown HealthStatusCode = "Unknown"
	// HealthWaitingForApproval: an InstallPlan of a Manual Subscription waits for a
	// person to approve it (spec.approved). Neither healthy nor failed.
	HealthWaitingForApproval HealthStatusCode = "WaitingForApproval"
)

// AppStatus is the state of one app.
type AppStatus struct {
	// Name is the app's name.
	Name string `json:"name"`
	// Path is the app's folder in the repository.
	// +optional
	Path string `json:"path,omitempty"`
	// Namespace is the app's destination namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Sync says whether the cluster matches the repository for this app.
	Sync SyncStatusCode `json:"sync"`
	// Health is the worst health of the app's objects.
	Health HealthStatusCode `json:"health"`
	// Message says why the app is not Synced and Healthy, if it is not.
	// +optional
	Message string `json:"message,omitempty"`
	// Objects is the number of objects the app renders.
	// +optional
	Objects int `json:"objects,omitempty"`
	// Resources are the app's objects that are not Synced and Healthy, at most
	// MaxAppResources of them.
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
}

// ResourceStatus is the state of one object of an app.
type ResourceStatus struct {
	ObjectReference `json:",inline"`
	Sync            SyncStatusCode   `json:"sync"`
	Health          HealthStatusCode `json:"health"`
	// Reason is a PascalCase reason: the object's own (an OLM phase or reason) or
	// olmsync's (WaitingForCRD, PolicyViolation).
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ObjectReference names an object by API version, kind, namespace and name.
type ObjectReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// PolicyViolation is one placement-rule finding.
type PolicyViolation struct {
	// Rule is the rule's ID (OP001…) or a user rule's name.
	Rule string `json:"rule"`
	// Severity is "error" or "warning".
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// App is the app holding the object.
	// +optional
	App string `json:"app,omitempty"`
	// File and Line locate the object's document in the repository.
	// +optional
	File string `json:"file,omitempty"`
	// +optional
	Line int `json:"line,omitempty"`
	// Object is the object at fault; empty for findings about no one object.
	// +optional
	Object *ObjectReference `json:"object,omitempty"`
	// Gated is true when the object was not applied because of this finding (an error
	// in enforce mode).
	// +optional
	Gated bool `json:"gated,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=olmsync,shortName=sy
// +kubebuilder:subresource:status
// The columns of a Flux Kustomization (Ready, Status, Age) with the revision applied, so
// that `kubectl get sy` says what is wrong without -o wide; URL and Suspended are wide.
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.lastAppliedRevision`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.source.url`,priority=1
// +kubebuilder:printcolumn:name="Suspended",type=boolean,JSONPath=`.spec.suspend`,priority=1

// Sync keeps a cluster in step with the apps of a Git repository: it fetches the
// repository, renders its apps, checks them against the placement rules, applies them in
// stages with server-side apply, prunes what is gone, and reports OLM-aware health.
type Sync struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec SyncSpec `json:"spec"`
	// +optional
	Status SyncStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// SyncList is a list of Syncs.
type SyncList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Sync `json:"items"`
}

// GetConditions returns the status conditions (fluxcd/pkg/runtime/conditions.Getter).
func (in *Sync) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions (fluxcd/pkg/runtime/conditions.Setter).
func (in *Sync) SetConditions(conditions []metav1.Condition) { in.Status.Conditions = conditions }

// GetRequeueAfter is how long after a successful reconcile the next one is due: the
// shorter of the drift-correction and fetch intervals.
func (in *Sync) GetRequeueAfter() time.Duration {
	d := in.Spec.Interval.Duration
	if f := in.Spec.Source.Interval.Duration; f > 0 && (d <= 0 || f < d) {
		d = f
	}
	return d
}

// FetchTimeout is the bound on one fetch: spec.source.timeout, else DefaultFetchTimeout.
func (in *Sync) FetchTimeout() time.Duration {
	if t := in.Spec.Source.Timeout; t != nil && t.Duration > 0 {
		return t.Duration
	}
	return DefaultFetchTimeout
}

// PruneOperators is spec.pruneOptions.operators, Delete when unset.
func (in *Sync) PruneOperators() PruneOperatorsPolicy {
	if in.Spec.PruneOptions.Operators == PruneOperatorsKeep {
		return PruneOperatorsKeep
	}
	return PruneOperatorsDelete
}

// PolicyMode is spec.policy.mode, enforce when unset.
func (in *Sync) PolicyMode() PolicyMode {
	if in.Spec.Policy.Mode == PolicyModeAudit {
		return PolicyModeAudit
	}
	return PolicyModeEnforce
}

// DefaultFetchTimeout bounds a fetch when spec.source.timeout is unset.
const DefaultFetchTimeout = 60 * time.Second
