package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorGroupSpec selects the group's target namespaces (see operators.coreos.com/v1).
type OperatorGroupSpec struct {
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	// +listType=set
	TargetNamespaces []string `json:"targetNamespaces,omitempty"`
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// +optional
	StaticProvidedAPIs bool `json:"staticProvidedAPIs,omitempty"`
}

// OperatorGroupStatus is where the group's resolved target namespaces are reported.
type OperatorGroupStatus struct {
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
	// +optional
	ServiceAccountRef *corev1.ObjectReference `json:"serviceAccountRef,omitempty"`
	LastUpdated       *metav1.Time            `json:"lastUpdated"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=og,categories=olm
// +kubebuilder:subresource:status

// OperatorGroup is the v1alpha2 form of an OperatorGroup.
type OperatorGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OperatorGroupSpec `json:"spec,omitzero"`
	// +optional
	Status OperatorGroupStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// OperatorGroupList is a list of v1alpha2 OperatorGroups.
type OperatorGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []OperatorGroup `json:"items"`
}
