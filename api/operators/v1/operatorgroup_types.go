package v1

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The annotations and labels OLM reads and writes for OperatorGroups.
const (
	OperatorGroupKind = "OperatorGroup"

	// OperatorGroupAnnotationKey, on a member CSV, names its OperatorGroup.
	OperatorGroupAnnotationKey = "olm.operatorGroup"
	// OperatorGroupNamespaceAnnotationKey, on a member CSV, names the group's namespace.
	// This is what OLM's code writes; seed 000 calls it olm.operatorGroupNamespace, which
	// olmsync writes as well (OperatorGroupNamespaceAnnotationKeySeed).
	OperatorGroupNamespaceAnnotationKey = "olm.operatorNamespace"
	// OperatorGroupNamespaceAnnotationKeySeed is the name seeds 000 and 004 give the
	// group-namespace annotation. Operators in the wild read either, so both are written.
	OperatorGroupNamespaceAnnotationKeySeed = "olm.operatorGroupNamespace"
	// OperatorGroupTargetsAnnotationKey, on a member CSV and its Deployments' pods, lists
	// the target namespaces, sorted and comma-separated ("" for all namespaces).
	OperatorGroupTargetsAnnotationKey = "olm.targetNamespaces"
	// OperatorGroupProvidedAPIsAnnotationKey lists the group's APIs as Kind.version.group,
	// sorted and comma-separated.
	OperatorGroupProvidedAPIsAnnotationKey = "olm.providedAPIs"

	// OperatorGroupLabelPrefix prefixes the label put on each target namespace of a
	// non-global group: olm.operatorgroup.uid/<group uid>.
	OperatorGroupLabelPrefix = "olm.operatorgroup.uid/"

	// The OperatorGroup condition types and reasons.
	OperatorGroupServiceAccountCondition = "OperatorGroupServiceAccount"
	MultipleOperatorGroupCondition       = "MultipleOperatorGroup"
	MultipleOperatorGroupsReason         = "MultipleOperatorGroupsFound"
	OperatorGroupServiceAccountReason    = "ServiceAccountNotFound"
)

// UpgradeStrategy says whether OLM may replace a failed CSV.
// +kubebuilder:validation:Enum=Default;TechPreviewUnsafeFailForward
type UpgradeStrategy string

const (
	// UpgradeStrategyDefault moves a CSV to Replacing only from Succeeded.
	UpgradeStrategyDefault UpgradeStrategy = "Default"
	// UpgradeStrategyUnsafeFailForward also replaces a Failed CSV.
	UpgradeStrategyUnsafeFailForward UpgradeStrategy = "TechPreviewUnsafeFailForward"
)

// OperatorGroupSpec selects the group's target namespaces. targetNamespaces wins over
// selector; with neither, the group is global and targets all namespaces.
type OperatorGroupSpec struct {
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	// +listType=set
	TargetNamespaces []string `json:"targetNamespaces,omitempty"`
	// ServiceAccountName scopes the operators of the group to this service account's rights.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// StaticProvidedAPIs tells OLM not to update the olm.providedAPIs annotation.
	// +optional
	StaticProvidedAPIs bool `json:"staticProvidedAPIs,omitempty"`
	// +kubebuilder:default=Default
	// +optional
	UpgradeStrategy UpgradeStrategy `json:"upgradeStrategy,omitempty"`
}

// OperatorGroupStatus is where the group's resolved target namespaces are reported.
type OperatorGroupStatus struct {
	// Namespaces is the resolved set of target namespaces; [""] for all namespaces.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
	// +optional
	ServiceAccountRef *corev1.ObjectReference `json:"serviceAccountRef,omitempty"`
	LastUpdated       *metav1.Time            `json:"lastUpdated"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=og,categories=olm
// +kubebuilder:subresource:status

// OperatorGroup is OLM's unit of multitenancy: the operators installed in its namespace
// watch its target namespaces.
type OperatorGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	// +kubebuilder:default={upgradeStrategy:Default}
	Spec OperatorGroupSpec `json:"spec,omitzero"`
	// +optional
	Status OperatorGroupStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// OperatorGroupList is a list of OperatorGroups.
type OperatorGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []OperatorGroup `json:"items"`
}

// BuildTargetNamespaces returns status.namespaces sorted and comma-joined: the value of a
// member CSV's olm.targetNamespaces annotation.
func (o *OperatorGroup) BuildTargetNamespaces() string {
	ns := slices.Clone(o.Status.Namespaces)
	slices.Sort(ns)
	return strings.Join(ns, ",")
}

// EffectiveUpgradeStrategy returns the group's upgrade strategy, Default unless it says
// TechPreviewUnsafeFailForward.
func (o *OperatorGroup) EffectiveUpgradeStrategy() UpgradeStrategy {
	if o.Spec.UpgradeStrategy == UpgradeStrategyUnsafeFailForward {
		return UpgradeStrategyUnsafeFailForward
	}
	return UpgradeStrategyDefault
}
