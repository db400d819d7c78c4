// Package v2 contains OLM's operators.coreos.com/v2 OperatorCondition, the storage version
// of the kind: an operator reports its conditions (Upgradeable above all) in spec.conditions,
// OLM copies them to status.conditions, and an administrator overrides them in
// spec.overrides.
//
// +kubebuilder:object:generate=true
// +groupName=operators.coreos.com
package v2
