package v1alpha1

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InstallPlanKind is the kind of an InstallPlan.
const InstallPlanKind = "InstallPlan"

// Approval says whether an InstallPlan runs on its own or waits for a person.
// +kubebuilder:validation:Enum=Automatic;Manual
type Approval string

const (
	ApprovalAutomatic Approval = "Automatic"
	ApprovalManual    Approval = "Manual"
)

// InstallPlanSpec names the CSVs to install and how the plan is approved.
type InstallPlanSpec struct {
	// +optional
	CatalogSource string `json:"source,omitempty"`
	// +optional
	CatalogSourceNamespace     string   `json:"sourceNamespace,omitempty"`
	ClusterServiceVersionNames []string `json:"clusterServiceVersionNames"`
	Approval                   Approval `json:"approval"`
	Approved                   bool     `json:"approved"`
	// Generation orders the plans of a namespace; the highest is the newest.
	// +optional
	Generation int `json:"generation,omitempty"`
}

// InstallPlanPhase is the phase of an InstallPlan.
type InstallPlanPhase string

// The InstallPlan phases. olmsync writes Planning while it resolves, as seed 002 describes.
const (
	InstallPlanPhaseNone             InstallPlanPhase = ""
	InstallPlanPhasePlanning         InstallPlanPhase = "Planning"
	InstallPlanPhaseRequiresApproval InstallPlanPhase = "RequiresApproval"
	InstallPlanPhaseInstalling       InstallPlanPhase = "Installing"
	InstallPlanPhaseComplete         InstallPlanPhase = "Complete"
	InstallPlanPhaseFailed           InstallPlanPhase = "Failed"
)

// InstallPlanConditionType is the type of an InstallPlan condition.
type InstallPlanConditionType string

const (
	InstallPlanResolved  InstallPlanConditionType = "Resolved"
	InstallPlanInstalled InstallPlanConditionType = "Installed"
)

// InstallPlanConditionReason is the reason of an InstallPlan condition.
type InstallPlanConditionReason string

const (
	InstallPlanReasonPlanUnknown        InstallPlanConditionReason = "PlanUnknown"
	InstallPlanReasonInstallCheckFailed InstallPlanConditionReason = "InstallCheckFailed"
	InstallPlanReasonDependencyConflict InstallPlanConditionReason = "DependenciesConflict"
	InstallPlanReasonComponentFailed    InstallPlanConditionReason = "InstallComponentFailed"
)

// StepStatus is the state of one step of an InstallPlan.
type StepStatus string

const (
	StepStatusUnknown             StepStatus = "Unknown"
	StepStatusNotPresent          StepStatus = "NotPresent"
	StepStatusPresent             StepStatus = "Present"
	StepStatusCreated             StepStatus = "Created"
	StepStatusNotCreated          StepStatus = "NotCreated"
	StepStatusWaitingForAPI       StepStatus = "WaitingForApi"
	StepStatusUnsupportedResource StepStatus = "UnsupportedResource"
)

// InstallPlanStatus is where a plan's steps and progress are recorded.
type InstallPlanStatus struct {
	Phase InstallPlanPhase `json:"phase"`
	// +optional
	Conditions     []InstallPlanCondition `json:"conditions,omitempty"`
	CatalogSources []string               `json:"catalogSources"`
	// Plan is the ordered list of objects the plan creates.
	// +optional
	Plan []Step `json:"plan,omitempty"`
	// +optional
	BundleLookups []BundleLookup `json:"bundleLookups,omitempty"`
	// +optional
	AttenuatedServiceAccountRef *corev1.ObjectReference `json:"attenuatedServiceAccountRef,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// InstallPlanCondition is a condition of an InstallPlan.
type InstallPlanCondition struct {
	// +optional
	Type InstallPlanConditionType `json:"type,omitempty"`
	// +optional
	Status corev1.ConditionStatus `json:"status,omitempty"`
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason InstallPlanConditionReason `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// Step is one object an InstallPlan creates, on behalf of the CSV named in Resolving.
type Step struct {
	Resolving string       `json:"resolving"`
	Resource  StepResource `json:"resource"`
	// +optional
	Optional bool       `json:"optional,omitempty"`
	Status   StepStatus `json:"status"`
}

// StepResource is the object of a Step, with its manifest.
type StepResource struct {
	CatalogSource          string `json:"sourceName"`
	CatalogSourceNamespace string `json:"sourceNamespace"`
	Group                  string `json:"group"`
	Version                string `json:"version"`
	Kind                   string `json:"kind"`
	Name                   string `json:"name"`
	// +optional
	Manifest string `json:"manifest,omitempty"`
}

// BundleLookupConditionType is the type of a BundleLookup condition.
type BundleLookupConditionType string

const (
	BundleLookupPending BundleLookupConditionType = "BundleLookupPending"
	BundleLookupFailed  BundleLookupConditionType = "BundleLookupFailed"
)

// BundleLookupNotPersisted is the condition type OLM sets on a bundle lookup until the
// bundle's steps are in the plan (OLM's resolver.BundleLookupConditionPacked).
const BundleLookupNotPersisted BundleLookupConditionType = "BundleLookupNotPersisted"

// The reasons and messages of bundle lookup conditions. The first ones are OLM's, verbatim
// (operator-lifecycle-manager pkg/controller/bundle/bundle_unpacker.go); OLM copies the
// failed condition's reason and message from its unpack Job's Failed condition, so a
// timeout reads as the Kubernetes Job controller words it. olmsync unpacks in-process
// and writes the same reasons, with what went wrong after the message.
const (
	BundleLookupReasonNotUnpacked           = "BundleNotUnpacked"
	BundleLookupMessageNotUnpacked          = "bundle contents have not yet been persisted to installplan status"
	BundleLookupReasonJobNotStarted         = "JobNotStarted"
	BundleLookupMessageJobNotStarted        = "unpack job not yet started"
	BundleLookupReasonJobIncomplete         = "JobIncomplete"
	BundleLookupMessageJobIncomplete        = "unpack job not completed"
	BundleLookupReasonCatalogSourceMissing  = "CatalogSourceMissing"
	BundleLookupMessageCatalogSourceMissing = "referenced catalogsource not found"
	BundleLookupReasonDeadlineExceeded      = "DeadlineExceeded"
	BundleLookupMessageDeadlineExceeded     = "Job was active longer than specified deadline"
	// BundleLookupReasonUnpackFailed is olmsync's: the image was pulled and is not a
	// bundle OLM can install (or not the bundle the catalog says), or does not decode;
	// trying again cannot help, so the lookup fails at once. OLM's Job would fail after
	// its retries with the Job controller's BackoffLimitExceeded.
	BundleLookupReasonUnpackFailed = "UnpackFailed"
)

// MessageBundleUnpackingFailed is the format of the Installed condition message of a plan
// whose bundle lookup failed (OLM's, before it stopped creating such plans): the failed
// condition's reason and message.
const MessageBundleUnpackingFailed = "bundle unpacking failed. Reason: %v, and Message: %v"

// ErrInvalidInstallPlan is OLM's error for a plan that cannot be executed as it is: a step
// of a kind OLM does not install (the step's status is UnsupportedResource).
var ErrInvalidInstallPlan = errors.New("the InstallPlan contains invalid data")

// MessageRetryingExecution is the format of status.message while OLM retries a plan whose
// execution failed, within its retry timeout (--install-plan-retry-timeout).
const MessageRetryingExecution = "retrying execution due to error: %s"

// BundleLookupCondition is a condition of a BundleLookup.
type BundleLookupCondition struct {
	Type   BundleLookupConditionType `json:"type"`
	Status corev1.ConditionStatus    `json:"status"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// BundleLookup is a bundle image a plan has still to unpack.
type BundleLookup struct {
	Path             string                  `json:"path"`
	Identifier       string                  `json:"identifier"`
	Replaces         string                  `json:"replaces"`
	CatalogSourceRef *corev1.ObjectReference `json:"catalogSourceRef"`
	// +optional
	Conditions []BundleLookupCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// +optional
	Properties string `json:"properties,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ip,categories=olm
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="CSV",type=string,JSONPath=`.spec.clusterServiceVersionNames[0]`,description="The first CSV in the list of clusterServiceVersionNames"
// +kubebuilder:printcolumn:name="Approval",type=string,JSONPath=`.spec.approval`,description="The approval mode"
// +kubebuilder:printcolumn:name="Approved",type=boolean,JSONPath=`.spec.approved`

// InstallPlan is the list of objects to create to install or upgrade CSVs, and the
// record of creating them.
type InstallPlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec InstallPlanSpec `json:"spec"`
	// +optional
	Status InstallPlanStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// InstallPlanList is a list of InstallPlans.
type InstallPlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []InstallPlan `json:"items"`
}
