package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// OperatorConditionKind is the kind's name.
	OperatorConditionKind = "OperatorCondition"
	// Upgradeable is the condition type an operator sets to False to hold back the
	// replacement of its CSV.
	Upgradeable = "Upgradeable"
)

// OperatorConditionSpec is where an operator reports its conditions to OLM and where an
// administrator overrides them. OLM's field names and JSON tags.
type OperatorConditionSpec struct {
	// ServiceAccounts are the operator's service accounts, the subjects of the RoleBinding
	// that lets them update this object.
	// +optional
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
	// Deployments are the operator's deployments.
	// +optional
	Deployments []string `json:"deployments,omitempty"`
	// Overrides win over the operator's conditions (an administrator's say).
	// +optional
	Overrides []metav1.Condition `json:"overrides,omitempty"`
	// Conditions are the operator's own.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OperatorConditionStatus holds the conditions OLM has observed, copied from spec.conditions.
type OperatorConditionStatus struct {
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=condition,categories=olm
// +kubebuilder:subresource:status

// OperatorCondition is how an operator tells OLM about its state; OLM makes one per CSV,
// named as the CSV.
type OperatorCondition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OperatorConditionSpec `json:"spec,omitzero"`
	// +optional
	Status OperatorConditionStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// OperatorConditionList is a list of OperatorConditions.
type OperatorConditionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []OperatorCondition `json:"items"`
}
