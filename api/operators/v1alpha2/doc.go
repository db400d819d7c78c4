// Package v1alpha2 contains OLM's older operators.coreos.com/v1alpha2 OperatorGroup. The
// API server still serves it (real repositories use it) and stores it as v1; the two
// versions differ only in that v1alpha2 has no upgradeStrategy.
//
// +kubebuilder:object:generate=true
// +groupName=operators.coreos.com
package v1alpha2
