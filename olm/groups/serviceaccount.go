package groups

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
)

// messageServiceAccountNotFoundFormat is the OperatorGroupServiceAccount condition's
// message, verbatim (OLM pkg/lib/scoped/syncer.go).
const messageServiceAccountNotFoundFormat = "ServiceAccount %s not found"

// ServiceAccountCheck is what OLM's service-account step makes of an OperatorGroup.
type ServiceAccountCheck struct {
	// Missing: spec.serviceAccountName names no ServiceAccount of the group's namespace.
	// The group then carries the OperatorGroupServiceAccount condition (reason
	// ServiceAccountNotFound, Message) and OLM stops syncing it there: status.namespaces is
	// not (re)computed.
	Missing bool
	// Message is the condition's message when Missing.
	Message string
	// Ref is status.serviceAccountRef when the account exists; nil otherwise (and when the
	// group names none).
	Ref *corev1.ObjectReference
}

// CheckServiceAccount is OLM's service-account step of an OperatorGroup sync over the
// account its spec names: sa is that ServiceAccount of the group's namespace, or nil when
// it does not exist. A group that names none passes with no reference. The OperatorGroup
// controller calls it with what it read from the API server, the offline preview with the
// cluster state and the ServiceAccounts of Git.
func CheckServiceAccount(og *operatorsv1.OperatorGroup, sa *corev1.ServiceAccount) ServiceAccountCheck {
	name := og.Spec.ServiceAccountName
	switch {
	case name == "":
		return ServiceAccountCheck{}
	case sa == nil:
		return ServiceAccountCheck{Missing: true, Message: fmt.Sprintf(messageServiceAccountNotFoundFormat, name)}
	}
	return ServiceAccountCheck{Ref: &corev1.ObjectReference{
		Kind: "ServiceAccount", APIVersion: "v1", Namespace: sa.Namespace, Name: sa.Name, UID: sa.UID,
	}}
}
