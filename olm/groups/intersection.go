package groups

import (
	"slices"
	"strings"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// APIReconciliation is what the provided-API intersection check decides for a CSV in its
// group (seed 000 "Rules for intersection"; OLM's APIReconciliationResult).
type APIReconciliation string

const (
	// NoAPIConflict: no intersecting group provides the CSV's APIs and its group already lists
	// them. The CSV goes on.
	NoAPIConflict APIReconciliation = "NoAPIConflict"
	// AddAPIs: no intersecting group provides the CSV's APIs, but its group does not list them
	// all yet: the group's olm.providedAPIs becomes the union.
	AddAPIs APIReconciliation = "AddAPIs"
	// RemoveAPIs: an intersecting group provides some of the CSV's APIs and its own group lists
	// them all: the group's olm.providedAPIs becomes the difference.
	RemoveAPIs APIReconciliation = "RemoveAPIs"
	// APIConflict: an intersecting group provides some of the CSV's APIs and its own group does
	// not list them all. The CSV fails with InterOperatorGroupOwnerConflict.
	APIConflict APIReconciliation = "APIConflict"
)

// ReconcileAPIs applies the seed's rule table to a CSV that provides apis, in group, with the
// other groups of the cluster (group itself, if among them, is skipped). "Intersecting
// provided APIs" are the CSV's APIs that the olm.providedAPIs of any group whose targets
// intersect group's also lists (GroupsIntersect).
//
//	intersecting set empty,     apis ⊆ group's  → NoAPIConflict
//	intersecting set empty,     apis ⊄ group's  → AddAPIs
//	intersecting set not empty, apis ⊄ group's  → APIConflict
//	intersecting set not empty, apis ⊆ group's  → RemoveAPIs
//
// What a static group makes of AddAPIs and RemoveAPIs is up to the caller (IntersectAPIs).
func ReconcileAPIs(apis APISet, group *operatorsv1.OperatorGroup, others []operatorsv1.OperatorGroup) APIReconciliation {
	return reconcile(apis, GroupProvidedAPIs(group), Conflicts(apis, group, others))
}

// reconcile is the rule table, given the CSV's APIs, its group's and the conflicting groups.
func reconcile(apis, groupAPIs APISet, conflicts []Conflict) APIReconciliation {
	intersecting := len(conflicts) > 0
	subset := apis.IsSubset(groupAPIs)
	switch {
	case intersecting && subset:
		return RemoveAPIs
	case intersecting:
		return APIConflict
	case !subset:
		return AddAPIs
	default:
		return NoAPIConflict
	}
}

// Conflict is another group whose targets intersect a group's and whose olm.providedAPIs
// lists some of the same APIs.
type Conflict struct {
	Namespace, Name string
	// APIs are the shared APIs.
	APIs APISet
}

// Conflicts returns, sorted by namespace and name, the groups among others whose targets
// intersect group's and that list any of apis in their olm.providedAPIs. Pass the group's own
// GroupProvidedAPIs to ask which groups compete with it (seed 000: "intersecting provided
// APIs"), or a CSV's ProvidedAPIs to ask which stand in its way.
func Conflicts(apis APISet, group *operatorsv1.OperatorGroup, others []operatorsv1.OperatorGroup) []Conflict {
	var out []Conflict
	for i := range others {
		other := &others[i]
		if sameGroup(other, group) || !GroupsIntersect(group, other) {
			continue
		}
		if shared := apis.Intersection(GroupProvidedAPIs(other)); len(shared) > 0 {
			out = append(out, Conflict{Namespace: other.Namespace, Name: other.Name, APIs: shared})
		}
	}
	slices.SortFunc(out, func(a, b Conflict) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out
}

func sameGroup(a, b *operatorsv1.OperatorGroup) bool {
	return a.Namespace == b.Namespace && a.Name == b.Name
}

// Intersection is the outcome of the provided-API intersection check for one CSV sync.
type Intersection struct {
	// Result is the seed's rule-table decision.
	Result APIReconciliation
	// Transition is the CSV's new status: Failed with InterOperatorGroupOwnerConflict, or
	// Failed with CannotModifyStaticOperatorGroupProvidedAPIs when the group is static and the
	// result is AddAPIs or RemoveAPIs. Nil when the CSV's status does not change.
	Transition *Transition
	// DeleteDeployments is set with a Failed transition: OLM removes the CSV's deployments.
	DeleteDeployments bool
	// ProvidedAPIs is the group's olm.providedAPIs after this sync: the union for AddAPIs, the
	// difference for RemoveAPIs, else unchanged (as the group had it).
	ProvidedAPIs string
	// AnnotationChanged reports whether ProvidedAPIs differs from the group's current value;
	// OLM then updates the group and requeues the CSV instead of going on.
	AnnotationChanged bool
	// Continue reports whether the CSV goes on to its phase machine in this sync (OLM goes on
	// only for NoAPIConflict, or an AddAPIs with nothing to add).
	Continue bool
	// Conflicts are the intersecting groups that list some of the CSV's APIs.
	Conflicts []Conflict
}

// IntersectAPIs runs OLM's provided-API intersection check for a member CSV of group against
// all the groups of the cluster (group itself is skipped among them). Each group's
// status.namespaces must hold its resolved targets.
func IntersectAPIs(csv *v1alpha1.ClusterServiceVersion, group *operatorsv1.OperatorGroup, groups []operatorsv1.OperatorGroup) (Intersection, error) {
	apis, err := ProvidedAPIs(csv)
	if err != nil {
		return Intersection{}, err
	}
	current := group.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]
	groupAPIs := GroupProvidedAPIs(group)
	conflicts := Conflicts(apis, group, groups)
	out := Intersection{
		Result:       reconcile(apis, groupAPIs, conflicts),
		ProvidedAPIs: current,
		Conflicts:    conflicts,
	}
	switch {
	case group.Spec.StaticProvidedAPIs && (out.Result == AddAPIs || out.Result == RemoveAPIs):
		// OLM leaves a CSV that already failed with a conflict as it is.
		if csv.Status.Reason != v1alpha1.CSVReasonInterOperatorGroupOwnerConflict {
			out.Transition = failed(v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, MessageCannotModifyStaticProvided)
			out.DeleteDeployments = true
		}
	case out.Result == APIConflict:
		out.Transition = failed(v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, MessageInterOperatorGroupConflict)
		out.DeleteDeployments = true
	case out.Result == AddAPIs:
		out.ProvidedAPIs = groupAPIs.Union(apis).String()
		out.AnnotationChanged = out.ProvidedAPIs != current
		// With nothing to write OLM lets the CSV go on, so that it is not stuck.
		out.Continue = !out.AnnotationChanged
	case out.Result == RemoveAPIs:
		out.ProvidedAPIs = groupAPIs.Difference(apis).String()
		out.AnnotationChanged = out.ProvidedAPIs != current
	default:
		out.Continue = true
	}
	return out, nil
}

// Prune is the outcome of PruneProvidedAPIs.
type Prune struct {
	// ProvidedAPIs is the group's olm.providedAPIs after the sync ("" when every API was pruned).
	ProvidedAPIs string
	// Changed reports whether ProvidedAPIs differs from the group's current value.
	Changed bool
	// WaitingFor names the CSV (namespace/name) whose pending install held the pruning back;
	// empty when nothing did.
	WaitingFor string
}

// PruneProvidedAPIs is what OLM's OperatorGroup sync does to a group's olm.providedAPIs,
// given the CSVs of the cluster: APIs that no non-copied CSV in the group's namespace provides
// are removed. A static group is never pruned. Pruning waits while a CSV of the namespace that
// is not being deleted, in phase "" or Pending, provides an API the annotation does not list
// yet: that CSV is about to add its APIs. (OLM checks one arbitrary such CSV per API; olmsync
// checks them all, which gives the same answer without depending on map order.) A CSV whose
// APIs cannot be read (an owned CRD name without a dot) is skipped, as in OLM.
func PruneProvidedAPIs(group *operatorsv1.OperatorGroup, csvs []v1alpha1.ClusterServiceVersion) Prune {
	current := group.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]
	out := Prune{ProvidedAPIs: current}
	if group.Spec.StaticProvidedAPIs {
		return out
	}
	annotated := GroupProvidedAPIs(group)
	kept := APISet{}
	for i := range csvs {
		csv := &csvs[i]
		if csv.Namespace != group.Namespace || IsCopied(csv) {
			continue
		}
		apis, err := ProvidedAPIs(csv)
		if err != nil {
			continue
		}
		kept = kept.Union(apis.Intersection(annotated))
		if isInstallPending(csv) && !apis.IsSubset(annotated) {
			out.WaitingFor = csv.Namespace + "/" + csv.Name
			return out
		}
	}
	if len(kept) < len(annotated) {
		out.ProvidedAPIs = kept.String()
		out.Changed = out.ProvidedAPIs != current
	}
	return out
}

// isInstallPending reports whether a CSV is on its way in: not being deleted, phase "" or Pending.
func isInstallPending(csv *v1alpha1.ClusterServiceVersion) bool {
	return csv.DeletionTimestamp == nil &&
		(csv.Status.Phase == v1alpha1.CSVPhaseNone || csv.Status.Phase == v1alpha1.CSVPhasePending)
}
