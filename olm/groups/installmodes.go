package groups

import (
	"fmt"
	"slices"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// InvalidInstallModesError is returned by NewInstallModeSet for a CSV that lists an install
// mode type twice; OLM fails such a CSV with reason InvalidInstallModes. Its Error is OLM's
// status message, verbatim (it names no object: wrap it to log it).
type InvalidInstallModesError struct {
	InstallModes []v1alpha1.InstallMode
}

func (e *InvalidInstallModesError) Error() string {
	return fmt.Sprintf(messageDuplicateInstallModesFormat, e.InstallModes)
}

// UnsupportedTargetsError says why a CSV's install modes do not support a target set, or why
// the target set is not valid at all; OLM fails the CSV with reason UnsupportedOperatorGroup.
// Its Error is OLM's status message, verbatim.
type UnsupportedTargetsError struct {
	// Mode is the install mode the target set needs and the CSV does not support; empty when
	// the target set itself is invalid (no namespace, or "" among others).
	Mode    v1alpha1.InstallModeType
	Message string
}

func (e *UnsupportedTargetsError) Error() string { return e.Message }

// InstallModeSet is a CSV's install modes by type: whether each is supported.
//
// A type the CSV does not list is unsupported, and no type implies another. Seed 000 says an
// omitted type is unsupported "unless support can be inferred by an existing entry that
// implicitly supports it", but names no such inference, and OLM's code
// (InstallModeSet.Supports) performs none; olmsync follows the code (docs/olm.md).
type InstallModeSet map[v1alpha1.InstallModeType]bool

// NewInstallModeSet makes the set from a CSV's spec.installModes. A type listed twice is an
// *InvalidInstallModesError, even when both entries agree, as in OLM.
func NewInstallModeSet(modes []v1alpha1.InstallMode) (InstallModeSet, error) {
	set := InstallModeSet{}
	for _, m := range modes {
		if _, dup := set[m.Type]; dup {
			return nil, &InvalidInstallModesError{InstallModes: slices.Clone(modes)}
		}
		set[m.Type] = m.Supported
	}
	return set, nil
}

// Supports reports, as an *UnsupportedTargetsError carrying OLM's message, whether an operator
// in operatorNamespace with these install modes can watch the target set (olm-behaviour 4.5):
//
//   - [] is never valid;
//   - [operatorNamespace] needs OwnNamespace, [""] AllNamespaces, [other] SingleNamespace;
//   - more than one namespace needs MultiNamespace, and OwnNamespace as well when the
//     operator's own namespace is among them; "" among several is invalid.
func (s InstallModeSet) Supports(operatorNamespace string, targets []string) error {
	unsupported := func(mode v1alpha1.InstallModeType, message string) error {
		return &UnsupportedTargetsError{Mode: mode, Message: message}
	}
	switch {
	case len(targets) == 0:
		return unsupported("", messageZeroNamespaces)
	case len(targets) == 1:
		switch targets[0] {
		case operatorNamespace:
			if !s[v1alpha1.InstallModeTypeOwnNamespace] {
				return unsupported(v1alpha1.InstallModeTypeOwnNamespace, messageModeOwnNamespace)
			}
		case namespaceAll:
			if !s[v1alpha1.InstallModeTypeAllNamespaces] {
				return unsupported(v1alpha1.InstallModeTypeAllNamespaces, messageModeAllNamespaces)
			}
		default:
			if !s[v1alpha1.InstallModeTypeSingleNamespace] {
				return unsupported(v1alpha1.InstallModeTypeSingleNamespace, messageModeSingleNamespace)
			}
		}
	case !s[v1alpha1.InstallModeTypeMultiNamespace]:
		return unsupported(v1alpha1.InstallModeTypeMultiNamespace, fmt.Sprintf(messageModeMultiNamespaceFormat, len(targets)))
	default:
		// OLM checks in list order, so the first offending entry decides the message.
		for _, ns := range targets {
			if ns == operatorNamespace && !s[v1alpha1.InstallModeTypeOwnNamespace] {
				return unsupported(v1alpha1.InstallModeTypeOwnNamespace, messageModeOwnNamespace)
			}
			if ns == namespaceAll {
				return unsupported("", messageNamespaceAllAmongOthers)
			}
		}
	}
	return nil
}

// CheckInstallModes is the install-mode check OLM runs on a member CSV: duplicate install
// modes fail it with InvalidInstallModes, a target set its modes do not support with
// UnsupportedOperatorGroup. It returns nil when the CSV supports the targets.
func CheckInstallModes(csv *v1alpha1.ClusterServiceVersion, targets []string) *Transition {
	set, err := NewInstallModeSet(csv.Spec.InstallModes)
	if err != nil {
		return failed(v1alpha1.CSVReasonInvalidInstallModes, err.Error())
	}
	if err := set.Supports(csv.Namespace, targets); err != nil {
		return failed(v1alpha1.CSVReasonUnsupportedOperatorGroup, err.Error())
	}
	return nil
}
