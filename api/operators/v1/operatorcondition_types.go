package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorConditionKind is the kind's name.
const OperatorConditionKind = "OperatorCondition"

// OperatorConditionSpec is the v1 spec of an OperatorCondition: OLM still serves v1, which
// has no spec.conditions (the operator wrote its conditions to status then).
type OperatorConditionSpec struct {
	// +optional
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
	// +optional
	Deployments []string `json:"deployments,omitempty"`
	// +optional
	Overrides []metav1.Condition `json:"overrides,omitempty"`
}

// OperatorConditionStatus holds the operator's conditions.
type OperatorConditionStatus struct {
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=condition,categories=olm
// +kubebuilder:subresource:status

// OperatorCondition in its older, still served version; stored as v2 (the versions convert
// with no webhook: the fields v1 lacks are kept by the server).
type OperatorCondition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OperatorConditionSpec `json:"spec,omitzero"`
	// +optional
	Status OperatorConditionStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// OperatorConditionList is a list of v1 OperatorConditions.
type OperatorConditionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []OperatorCondition `json:"items"`
}
