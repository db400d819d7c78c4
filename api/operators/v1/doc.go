// Package v1 contains OLM's operators.coreos.com/v1 OperatorGroup, the storage version
// of the kind.
//
// +kubebuilder:object:generate=true
// +groupName=operators.coreos.com
package v1
