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

// The errors of OLM's service-account query of a namespace, verbatim (OLM
// pkg/lib/scoped/querier.go queryServiceAccountFromNamespace).
const (
	messageNoManagingGroup          = "no operator group found that is managing this namespace"
	messageManagingGroupsFormat     = "more than one operator group(s) are managing this namespace count=%d"
	messageServiceAccountSyncFormat = "please make sure the service account exists. sa=%s operatorgroup=%s/%s"
)

// OperatorGroupError is an error of ScopedServiceAccount: the namespace has no OperatorGroup
// that manages it, more than one, or one whose ServiceAccount has not been found. An
// InstallPlan of the namespace is then not executed: its Installed condition is
// InstallCheckFailed with the message, and the plan is tried again.
type OperatorGroupError struct{ Message string }

func (e *OperatorGroupError) Error() string { return e.Message }

// ScopedServiceAccount is OLM's query of the ServiceAccount an InstallPlan of a namespace
// executes with (UserDefinedServiceAccountQuerier), over the OperatorGroups of the namespace:
// those with no status.namespaces manage nothing and are skipped; exactly one must remain. It
// returns that group's status.serviceAccountRef when its spec names an account, nil when it
// names none (the plan runs with the controller's own rights), and an *OperatorGroupError when
// no group or several manage the namespace or the named account has no reference yet (it
// does not exist, or the OperatorGroup controller has not synced the group).
func ScopedServiceAccount(groups []operatorsv1.OperatorGroup) (*corev1.ObjectReference, error) {
	var managing []*operatorsv1.OperatorGroup
	for i := range groups {
		if len(groups[i].Status.Namespaces) > 0 {
			managing = append(managing, &groups[i])
		}
	}
	switch {
	case len(managing) == 0:
		return nil, &OperatorGroupError{Message: messageNoManagingGroup}
	case len(managing) > 1:
		return nil, &OperatorGroupError{Message: fmt.Sprintf(messageManagingGroupsFormat, len(managing))}
	}
	og := managing[0]
	if og.Spec.ServiceAccountName == "" {
		return nil, nil
	}
	if og.Status.ServiceAccountRef == nil {
		return nil, &OperatorGroupError{Message: fmt.Sprintf(messageServiceAccountSyncFormat, og.Spec.ServiceAccountName, og.Namespace, og.Name)}
	}
	ref := *og.Status.ServiceAccountRef
	return &ref, nil
}
