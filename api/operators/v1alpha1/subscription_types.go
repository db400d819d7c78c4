package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SubscriptionKind is the kind of a Subscription.
const SubscriptionKind = "Subscription"

// SubscriptionState is where a Subscription stands on its upgrade path.
type SubscriptionState string

// The Subscription states. olmsync follows seed 002: UpgradeAvailable while the catalog
// has a CSV that replaces the installed one and no InstallPlan exists yet, AtLatestKnown
// only when the installed CSV is the latest the catalog knows (docs/olm.md).
const (
	SubscriptionStateNone             SubscriptionState = ""
	SubscriptionStateFailed           SubscriptionState = "UpgradeFailed"
	SubscriptionStateUpgradeAvailable SubscriptionState = "UpgradeAvailable"
	SubscriptionStateUpgradePending   SubscriptionState = "UpgradePending"
	SubscriptionStateAtLatest         SubscriptionState = "AtLatestKnown"
)

// SubscriptionSpec names the package, channel and catalog to track.
type SubscriptionSpec struct {
	// CatalogSource is the name of the CatalogSource to install from.
	CatalogSource string `json:"source"`
	// CatalogSourceNamespace is that CatalogSource's namespace.
	CatalogSourceNamespace string `json:"sourceNamespace"`
	// Package is the package name.
	Package string `json:"name"`
	// Channel to follow; empty means the package's default channel.
	// +optional
	Channel string `json:"channel,omitempty"`
	// StartingCSV is the CSV to install first, when nothing is installed yet.
	// +optional
	StartingCSV string `json:"startingCSV,omitempty"`
	// InstallPlanApproval is Automatic (the default) or Manual.
	// +optional
	InstallPlanApproval Approval `json:"installPlanApproval,omitempty"`
	// Config overrides parts of the operator's Deployments.
	// +optional
	Config *SubscriptionConfig `json:"config,omitempty"`
}

// SubscriptionConfig overrides parts of the Deployments the operator's CSV creates.
type SubscriptionConfig struct {
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty" patchMergeKey:"name" patchStrategy:"merge"`
	// +optional
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SubscriptionConditionType is the type of a Subscription condition.
type SubscriptionConditionType string

// The Subscription condition types, as OLM writes them.
const (
	SubscriptionCatalogSourcesUnhealthy SubscriptionConditionType = "CatalogSourcesUnhealthy"
	SubscriptionInstallPlanMissing      SubscriptionConditionType = "InstallPlanMissing"
	SubscriptionInstallPlanPending      SubscriptionConditionType = "InstallPlanPending"
	SubscriptionInstallPlanFailed       SubscriptionConditionType = "InstallPlanFailed"
	SubscriptionResolutionFailed        SubscriptionConditionType = "ResolutionFailed"
	SubscriptionBundleUnpacking         SubscriptionConditionType = "BundleUnpacking"
	SubscriptionBundleUnpackFailed      SubscriptionConditionType = "BundleUnpackFailed"
	SubscriptionDeprecated              SubscriptionConditionType = "Deprecated"
	SubscriptionPackageDeprecated       SubscriptionConditionType = "PackageDeprecated"
	SubscriptionChannelDeprecated       SubscriptionConditionType = "ChannelDeprecated"
	SubscriptionBundleDeprecated        SubscriptionConditionType = "BundleDeprecated"
)

// The Subscription condition reasons, as OLM writes them.
const (
	NoCatalogSourcesFound         = "NoCatalogSourcesFound"
	AllCatalogSourcesHealthy      = "AllCatalogSourcesHealthy"
	CatalogSourcesAdded           = "CatalogSourcesAdded"
	CatalogSourcesUpdated         = "CatalogSourcesUpdated"
	CatalogSourcesDeleted         = "CatalogSourcesDeleted"
	UnhealthyCatalogSourceFound   = "UnhealthyCatalogSourceFound"
	ReferencedInstallPlanNotFound = "ReferencedInstallPlanNotFound"
	InstallPlanNotYetReconciled   = "InstallPlanNotYetReconciled"
	InstallPlanFailed             = "InstallPlanFailed"
	ConstraintsNotSatisfiable     = "ConstraintsNotSatisfiable"
	ErrorPreventedResolution      = "ErrorPreventedResolution"
	// UnpackingInProgress (BundleUnpacking), BundleUnpackFailed and ErrorPreventedUnpacking
	// (BundleUnpackFailed): operator-lifecycle-manager pkg/controller/operators/catalog/operator.go.
	UnpackingInProgress     = "UnpackingInProgress"
	BundleUnpackFailed      = "BundleUnpackFailed"
	ErrorPreventedUnpacking = "ErrorPreventedUnpacking"
)

// MessageBundleUnpackFailed is the format of OLM's BundleUnpackFailed (reason
// BundleUnpackFailed) condition message: the failed bundle lookup's reason and message
// (operator-lifecycle-manager pkg/controller/operators/catalog/operator.go, the same words
// as the Installed condition of a plan whose lookup failed).
const MessageBundleUnpackFailed = MessageBundleUnpackingFailed

// SubscriptionCondition is a condition of a Subscription. OLM's own shape (not
// metav1.Condition): lastHeartbeatTime, no observedGeneration.
type SubscriptionCondition struct {
	Type   SubscriptionConditionType `json:"type"`
	Status corev1.ConditionStatus    `json:"status"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastHeartbeatTime *metav1.Time `json:"lastHeartbeatTime,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// SubscriptionStatus is where OLM reports a Subscription's progress.
type SubscriptionStatus struct {
	// CurrentCSV is the CSV the Subscription is moving to (or is at).
	// +optional
	CurrentCSV string `json:"currentCSV,omitempty"`
	// InstalledCSV is the CSV installed for this Subscription.
	// +optional
	InstalledCSV string `json:"installedCSV,omitempty"`
	// Install references the InstallPlan that installs CurrentCSV (OLM's older field).
	// +optional
	Install *InstallPlanReference `json:"installplan,omitempty"`
	// +optional
	State SubscriptionState `json:"state,omitempty"`
	// +optional
	Reason ConditionReason `json:"reason,omitempty"`
	// +optional
	InstallPlanGeneration int `json:"installPlanGeneration,omitempty"`
	// +optional
	InstallPlanRef *corev1.ObjectReference `json:"installPlanRef,omitempty"`
	// +optional
	CatalogHealth []SubscriptionCatalogHealth `json:"catalogHealth,omitempty"`
	// +optional
	Conditions  []SubscriptionCondition `json:"conditions,omitempty"`
	LastUpdated metav1.Time             `json:"lastUpdated"`
}

// InstallPlanReference references an InstallPlan by name and UID.
type InstallPlanReference struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uuid"`
}

// SubscriptionCatalogHealth is the health of one catalog the Subscription can see.
type SubscriptionCatalogHealth struct {
	CatalogSourceRef *corev1.ObjectReference `json:"catalogSourceRef"`
	LastUpdated      *metav1.Time            `json:"lastUpdated"`
	Healthy          bool                    `json:"healthy"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName={sub,subs},categories=olm
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Package",type=string,JSONPath=`.spec.name`,description="The package subscribed to"
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source`,description="The catalog source for the specified package"
// +kubebuilder:printcolumn:name="Channel",type=string,JSONPath=`.spec.channel`,description="The channel of updates to subscribe to"

// Subscription keeps an operator installed and up to date by tracking a channel of a
// package in a catalog.
type Subscription struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec SubscriptionSpec `json:"spec"`
	// +optional
	Status SubscriptionStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// SubscriptionList is a list of Subscriptions.
type SubscriptionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Subscription `json:"items"`
}

// InstallPlanApproval returns the Subscription's approval as OLM reads it: Manual when it
// says Manual, Automatic otherwise (empty included).
func (s *Subscription) InstallPlanApproval() Approval {
	if s.Spec.InstallPlanApproval == ApprovalManual {
		return ApprovalManual
	}
	return ApprovalAutomatic
}
