package groups

import (
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// Skip says why Evaluate did not look at a CSV.
type Skip string

const (
	// SkipCopied: a copied CSV is never transitioned; it mirrors its parent.
	SkipCopied Skip = "Copied"
	// SkipNoRetry: OLM does not touch a CSV failed with InstallComponentFailedNoRetry.
	SkipNoRetry Skip = "InstallComponentFailedNoRetry"
)

// maxIntersectionSteps bounds the Add/Remove steps Evaluate follows. Two suffice: an AddAPIs
// settles into NoAPIConflict, a RemoveAPIs into APIConflict.
const maxIntersectionSteps = 4

// Evaluation is what OLM's OperatorGroup checks make of a CSV once they have settled.
type Evaluation struct {
	// Skipped is set when the checks do not apply to the CSV; nothing else is then set.
	Skipped Skip
	// Membership is the CSV's group and the annotations OLM writes on it.
	Membership Membership
	// Transition is the CSV's status when a check fails it (NoOperatorGroup,
	// TooManyOperatorGroups, NoTargetNamespaces, InvalidInstallModes, UnsupportedOperatorGroup,
	// InterOperatorGroupOwnerConflict, CannotModifyStaticOperatorGroupProvidedAPIs). Nil when the
	// checks pass: the CSV goes on with its phase machine (see Recovery for a Failed CSV).
	Transition *Transition
	// Intersection is the last step of the provided-API check; nil when an earlier check failed.
	Intersection *Intersection
	// Steps are the results of each provided-API step taken, in order (AddAPIs then
	// NoAPIConflict, for example).
	Steps []APIReconciliation
	// GroupProvidedAPIs is the group's olm.providedAPIs once settled; GroupAnnotationChanged
	// reports whether it differs from the group's current value.
	GroupProvidedAPIs      string
	GroupAnnotationChanged bool
	// DeleteDeployments is set when OLM deletes the CSV's deployments (an API conflict).
	DeleteDeployments bool
}

// Evaluate runs OLM's OperatorGroup checks on a CSV against the groups of the cluster, in
// OLM's order (olm-behaviour 3.1 steps 2 to 5), and follows them to where they settle, as if
// each write OLM makes on the way (the CSV's membership annotations, the group's
// olm.providedAPIs) had been made: membership, duplicate install modes, install-mode support
// for the group's targets, then the provided-API intersection. The controllers apply what it
// returns; the offline check reports it. Each group's status.namespaces must hold its resolved
// targets (TargetNamespaces). An owned CRD whose name has no dot is an *InvalidCRDNameError.
func Evaluate(csv *v1alpha1.ClusterServiceVersion, groups []operatorsv1.OperatorGroup) (Evaluation, error) {
	switch {
	case IsCopied(csv):
		return Evaluation{Skipped: SkipCopied}, nil
	case csv.Status.Reason == v1alpha1.CSVReasonComponentFailedNoRetry:
		return Evaluation{Skipped: SkipNoRetry}, nil
	}
	// OLM reads the CSV's APIs before anything else and stops on a bad CRD name.
	if _, err := ProvidedAPIs(csv); err != nil {
		return Evaluation{}, err
	}
	ev := Evaluation{Membership: MembershipOf(csv, groups)}
	if ev.Membership.Failure != nil {
		ev.Transition = ev.Membership.Failure
		return ev, nil
	}
	// The install-mode check reads olm.targetNamespaces as it stands once membership wrote it.
	if t := CheckInstallModes(csv, ParseTargetNamespacesAnnotation(ev.Membership.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey])); t != nil {
		ev.Transition = t
		return ev, nil
	}
	return ev, ev.settleIntersection(csv, groups)
}

// settleIntersection repeats the provided-API step, writing the group's new olm.providedAPIs
// into a copy each time, until a step changes nothing.
func (ev *Evaluation) settleIntersection(csv *v1alpha1.ClusterServiceVersion, groups []operatorsv1.OperatorGroup) error {
	group := ev.Membership.Group.DeepCopy()
	original := group.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]
	for range maxIntersectionSteps {
		in, err := IntersectAPIs(csv, group, groups)
		if err != nil {
			return err
		}
		ev.Intersection = &in
		ev.Steps = append(ev.Steps, in.Result)
		if !in.AnnotationChanged {
			break
		}
		if group.Annotations == nil {
			group.Annotations = map[string]string{}
		}
		group.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey] = in.ProvidedAPIs
	}
	ev.GroupProvidedAPIs = group.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]
	ev.GroupAnnotationChanged = ev.GroupProvidedAPIs != original
	ev.Transition = ev.Intersection.Transition
	ev.DeleteDeployments = ev.Intersection.DeleteDeployments
	return nil
}
