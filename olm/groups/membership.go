package groups

import (
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// Membership is the outcome of matching a CSV with the OperatorGroups of its namespace.
type Membership struct {
	// Group is the CSV's group: the only one in its namespace. Nil when there is none or
	// more than one.
	Group *operatorsv1.OperatorGroup
	// Annotations are what OLM writes on the CSV when Group is set: olm.operatorGroup, the
	// group's namespace under both olm.operatorNamespace (OLM's code) and
	// olm.operatorGroupNamespace (seed 000's name; olmsync writes both, docs/olm.md), and
	// olm.targetNamespaces when the group selects any namespace.
	Annotations map[string]string
	// Targets are the group's target namespaces (its status.namespaces, sorted).
	Targets []string
	// Failure is the Failed transition when the CSV cannot be a member: no group
	// (NoOperatorGroup), several (TooManyOperatorGroups), or a group that selects no
	// namespace (NoTargetNamespaces). Nil otherwise.
	Failure *Transition
}

// MembershipOf matches a CSV with the groups of the cluster (those of other namespaces are
// ignored). Each group's status.namespaces must hold its resolved targets (TargetNamespaces);
// an empty status means the group selects nothing.
func MembershipOf(csv *v1alpha1.ClusterServiceVersion, groups []operatorsv1.OperatorGroup) Membership {
	var mine []*operatorsv1.OperatorGroup
	for i := range groups {
		if groups[i].Namespace == csv.Namespace {
			mine = append(mine, &groups[i])
		}
	}
	switch len(mine) {
	case 0:
		return Membership{Failure: failed(v1alpha1.CSVReasonNoOperatorGroup, MessageNoOperatorGroup)}
	case 1:
	default:
		return Membership{Failure: failed(v1alpha1.CSVReasonTooManyOperatorGroups, MessageTooManyOperatorGroups)}
	}
	og := mine[0]
	m := Membership{
		Group:   og,
		Targets: sortedUnique(og.Status.Namespaces),
		Annotations: map[string]string{
			operatorsv1.OperatorGroupAnnotationKey:              og.Name,
			operatorsv1.OperatorGroupNamespaceAnnotationKey:     og.Namespace,
			operatorsv1.OperatorGroupNamespaceAnnotationKeySeed: og.Namespace,
		},
	}
	// OLM writes olm.targetNamespaces only for a group with a status; "" for a global one.
	if len(m.Targets) == 0 {
		m.Failure = failed(v1alpha1.CSVReasonNoTargetNamespaces, MessageNoTargetNamespacesMatched)
		return m
	}
	m.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey] = TargetNamespacesAnnotation(m.Targets)
	return m
}

// AnnotationsDiffer reports whether the CSV lacks any of the membership annotations or holds
// another value: OLM then rewrites them (and, in the same sync, goes no further).
func (m Membership) AnnotationsDiffer(csv *v1alpha1.ClusterServiceVersion) bool {
	for k, v := range m.Annotations {
		if got, ok := csv.Annotations[k]; !ok || got != v {
			return true
		}
	}
	return false
}

// isActiveMember reports whether a CSV takes part in its group: it is not a copy and has not
// failed one of the membership checks. Such a CSV's APIs count for its group.
func isActiveMember(csv *v1alpha1.ClusterServiceVersion) bool {
	if IsCopied(csv) {
		return false
	}
	switch csv.Status.Reason {
	case v1alpha1.CSVReasonNoOperatorGroup, v1alpha1.CSVReasonTooManyOperatorGroups,
		v1alpha1.CSVReasonNoTargetNamespaces, v1alpha1.CSVReasonUnsupportedOperatorGroup,
		v1alpha1.CSVReasonInvalidInstallModes:
		return csv.Status.Phase != v1alpha1.CSVPhaseFailed
	}
	return true
}
