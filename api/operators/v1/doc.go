// Package v1 contains OLM's operators.coreos.com/v1 OperatorGroup, the storage version
// of the kind, and the older OperatorCondition, which OLM still serves (stored as v2).
//
// +kubebuilder:object:generate=true
// +groupName=operators.coreos.com
package v1
