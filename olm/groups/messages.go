package groups

import (
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// The CSV status messages OLM writes for OperatorGroup failures and recoveries, verbatim
// (OLM pkg/controller/operators/olm/operator.go). Tools and people match on them, so they
// must not change.
const (
	MessageNoOperatorGroup             = "csv in namespace with no operatorgroups"
	MessageTooManyOperatorGroups       = "csv created in namespace with multiple operatorgroups, can't pick one automatically"
	MessageNoTargetNamespacesMatched   = "no targetNamespaces are matched operatorgroups namespace selection"
	MessageInterOperatorGroupConflict  = "intersecting operatorgroups provide the same apis"
	MessageCannotModifyStaticProvided  = "static provided api operatorgroup cannot be modified by these apis"
	MessageRecoveredInstallModes       = "InstallModes now support target namespaces"
	MessageRecoveredIntersection       = "OperatorGroup no longer intersecting with conflicting owner"
	MessageRecoveredStaticProvidedAPIs = "static OperatorGroup and intersecting groups now support providedAPIs"
	messageNamespaceAllInTargetsFormat = "TargetNamespaces cannot contain NamespaceAll: %v"
	messageDuplicateInstallModesFormat = "InstallMode list contains duplicates, cannot make set: %v"
	messageZeroNamespaces              = "operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces"
	messageNamespaceAllAmongOthers     = "operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1"
	messageModeOwnNamespace            = "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace"
	messageModeAllNamespaces           = "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"
	messageModeSingleNamespace         = "SingleNamespace InstallModeType not supported, cannot configure to watch one namespace"
	messageModeMultiNamespaceFormat    = "MultiNamespace InstallModeType not supported, cannot configure to watch %d namespaces"
)

// The owner labels OLM puts on what it generates for a CSV or an OperatorGroup
// (OLM pkg/lib/ownerutil), and the label marking an object as OLM's.
const (
	OwnerLabel          = "olm.owner"
	OwnerNamespaceLabel = "olm.owner.namespace"
	OwnerKindLabel      = "olm.owner.kind"
	ManagedLabel        = "olm.managed"
	ManagedLabelValue   = "true"
)

// Transition is a change of a CSV's status that OLM makes: its phase, reason and message.
type Transition struct {
	Phase   v1alpha1.ClusterServiceVersionPhase
	Reason  v1alpha1.ConditionReason
	Message string
}

// failed returns a Failed transition with the given reason and message.
func failed(reason v1alpha1.ConditionReason, message string) *Transition {
	return &Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: reason, Message: message}
}

// Recovery returns the transition OLM makes for a Failed CSV once the OperatorGroup checks
// that failed it pass again (Evaluate returned no transition): back to Pending, with a
// message saying which check recovered. It returns nil for a CSV that is not Failed, or that
// failed for a reason these checks do not own.
func Recovery(csv *v1alpha1.ClusterServiceVersion) *Transition {
	if csv.Status.Phase != v1alpha1.CSVPhaseFailed {
		return nil
	}
	pending := func(message string) *Transition {
		return &Transition{Phase: v1alpha1.CSVPhasePending, Reason: v1alpha1.CSVReasonRequirementsUnknown, Message: message}
	}
	switch csv.Status.Reason {
	case v1alpha1.CSVReasonNoTargetNamespaces, v1alpha1.CSVReasonNoOperatorGroup,
		v1alpha1.CSVReasonTooManyOperatorGroups, v1alpha1.CSVReasonUnsupportedOperatorGroup:
		return pending(MessageRecoveredInstallModes)
	case v1alpha1.CSVReasonInterOperatorGroupOwnerConflict:
		return pending(MessageRecoveredIntersection)
	case v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs:
		return pending(MessageRecoveredStaticProvidedAPIs)
	}
	return nil
}
