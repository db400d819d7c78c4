package groups

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/api/operators/v1alpha2"
)

// namespaceAll is how OLM's status and annotations write "all namespaces" (corev1.NamespaceAll).
const namespaceAll = corev1.NamespaceAll

// targetNamespacesSeparator separates the namespaces of olm.targetNamespaces.
const targetNamespacesSeparator = ","

// NamespaceAllInTargetsError is returned by TargetNamespaces for a group whose
// spec.targetNamespaces lists "" (all namespaces). OLM refuses such a group and leaves its
// status untouched.
type NamespaceAllInTargetsError struct {
	Namespace, Name  string
	TargetNamespaces []string
}

// Message is OLM's message for the error, verbatim.
func (e *NamespaceAllInTargetsError) Message() string {
	return fmt.Sprintf(messageNamespaceAllInTargetsFormat, e.TargetNamespaces)
}

func (e *NamespaceAllInTargetsError) Error() string {
	return fmt.Sprintf("operatorgroup %s/%s: %s", e.Namespace, e.Name, e.Message())
}

// TargetNamespaces returns the namespaces a group targets, given the cluster's namespaces
// with their labels: what OLM writes to status.namespaces, sorted.
//
//   - spec.targetNamespaces, when not empty, wins: exactly those names (deduplicated; whether
//     they exist is not checked). A "" among them is a *NamespaceAllInTargetsError.
//   - else a nil or empty spec.selector makes the group global: [""].
//   - else the names of the namespaces whose labels the selector matches, possibly none. The
//     group's own namespace is not added.
//
// An empty result means the group selects nothing: its members fail with NoTargetNamespaces.
func TargetNamespaces(og *operatorsv1.OperatorGroup, namespaces []corev1.Namespace) ([]string, error) {
	if len(og.Spec.TargetNamespaces) > 0 {
		if slices.Contains(og.Spec.TargetNamespaces, namespaceAll) {
			return nil, &NamespaceAllInTargetsError{
				Namespace: og.Namespace, Name: og.Name,
				TargetNamespaces: slices.Clone(og.Spec.TargetNamespaces),
			}
		}
		return sortedUnique(og.Spec.TargetNamespaces), nil
	}
	selector, err := metav1.LabelSelectorAsSelector(og.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("operatorgroup %s/%s: spec.selector: %w", og.Namespace, og.Name, err)
	}
	// A nil selector converts to labels.Nothing(), an empty one to a selector that is Empty();
	// OLM takes either to mean all namespaces.
	if selector.Empty() || selector == labels.Nothing() {
		return []string{namespaceAll}, nil
	}
	var matched []string
	for i := range namespaces {
		if selector.Matches(labels.Set(namespaces[i].Labels)) {
			matched = append(matched, namespaces[i].Name)
		}
	}
	return sortedUnique(matched), nil
}

// TargetsPending reports whether a group's status.namespaces has not caught up yet with the
// namespaces its spec selects in the cluster: the status is empty while TargetNamespaces finds
// some. Its members then wait for the group's controller instead of failing with
// NoTargetNamespaces: OLM, too, only fails them when the group's selection is empty, and until
// the status lists the targets it keeps rewriting their annotations. A group whose spec cannot
// be resolved is not pending (its members fail as its status says).
func TargetsPending(og *operatorsv1.OperatorGroup, namespaces []corev1.Namespace) bool {
	if len(og.Status.Namespaces) > 0 {
		return false
	}
	targets, err := TargetNamespaces(og, namespaces)
	return err == nil && len(targets) > 0
}

// IsAllNamespaces reports whether a target set is the all-namespaces set [""].
func IsAllNamespaces(targets []string) bool {
	return len(targets) == 1 && targets[0] == namespaceAll
}

// TargetNamespacesAnnotation is the value of a member CSV's olm.targetNamespaces annotation
// for a target set: the namespaces sorted and comma-joined, "" for all namespaces.
func TargetNamespacesAnnotation(targets []string) string {
	return strings.Join(sortedUnique(targets), targetNamespacesSeparator)
}

// ParseTargetNamespacesAnnotation splits an olm.targetNamespaces value the way OLM does: on
// commas, so that "" gives [""] (all namespaces).
func ParseTargetNamespacesAnnotation(value string) []string {
	return strings.Split(value, targetNamespacesSeparator)
}

// ClassifyTargets names the kind of a target set for a group in operatorNamespace (olm-behaviour
// 4.7): OwnNamespace is exactly the group's own namespace, SingleNamespace exactly one other,
// AllNamespaces [""], MultiNamespace more than one (which may include the own namespace). An
// empty set, or "" among others, is not a valid target set: the error carries OLM's message.
func ClassifyTargets(operatorNamespace string, targets []string) (v1alpha1.InstallModeType, error) {
	switch {
	case len(targets) == 0:
		return "", &UnsupportedTargetsError{Message: messageZeroNamespaces}
	case len(targets) == 1 && targets[0] == namespaceAll:
		return v1alpha1.InstallModeTypeAllNamespaces, nil
	case len(targets) == 1 && targets[0] == operatorNamespace:
		return v1alpha1.InstallModeTypeOwnNamespace, nil
	case len(targets) == 1:
		return v1alpha1.InstallModeTypeSingleNamespace, nil
	case slices.Contains(targets, namespaceAll):
		return "", &UnsupportedTargetsError{Message: messageNamespaceAllAmongOthers}
	default:
		return v1alpha1.InstallModeTypeMultiNamespace, nil
	}
}

// surfaceTargets is the namespace set compared when two groups are checked for intersection:
// status.namespaces plus the group's own namespace. The own
// namespace counts even when the status lists none (not synced yet, or a selector matching
// nothing): seed 000 says it is always included. OLM's code gives such a group an empty set
// that intersects nothing; the seed wins (docs/olm.md).
func surfaceTargets(og *operatorsv1.OperatorGroup) map[string]bool {
	set := map[string]bool{og.Namespace: true}
	for _, ns := range og.Status.Namespaces {
		set[ns] = true
	}
	return set
}

// GroupsIntersect reports whether two groups' target namespaces intersect, each counted with
// its own namespace (seed 000: "an OperatorGroup's namespace is always included as part of its
// selected target namespaces"). A global group intersects every group. Both groups'
// status.namespaces should hold their resolved targets (TargetNamespaces); one that does not
// yet still counts its own namespace.
func GroupsIntersect(a, b *operatorsv1.OperatorGroup) bool {
	if IsAllNamespaces(a.Status.Namespaces) || IsAllNamespaces(b.Status.Namespaces) {
		return true
	}
	sa := surfaceTargets(a)
	for ns := range surfaceTargets(b) {
		if sa[ns] {
			return true
		}
	}
	return false
}

// FromV1alpha2 converts a v1alpha2 OperatorGroup (the served, older version that manifests in
// Git still use) to the v1 storage version the rules here take. v1alpha2 has no upgrade
// strategy, so the result gets the default one.
func FromV1alpha2(in *v1alpha2.OperatorGroup) *operatorsv1.OperatorGroup {
	return &operatorsv1.OperatorGroup{
		TypeMeta: metav1.TypeMeta{
			APIVersion: operatorsv1.SchemeGroupVersion.String(),
			Kind:       operatorsv1.OperatorGroupKind,
		},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: operatorsv1.OperatorGroupSpec{
			Selector:           in.Spec.Selector.DeepCopy(),
			TargetNamespaces:   slices.Clone(in.Spec.TargetNamespaces),
			ServiceAccountName: in.Spec.ServiceAccountName,
			StaticProvidedAPIs: in.Spec.StaticProvidedAPIs,
			UpgradeStrategy:    operatorsv1.UpgradeStrategyDefault,
		},
		Status: operatorsv1.OperatorGroupStatus{
			Namespaces:        slices.Clone(in.Status.Namespaces),
			ServiceAccountRef: in.Status.ServiceAccountRef.DeepCopy(),
			LastUpdated:       in.Status.LastUpdated.DeepCopy(),
		},
	}
}

// sortedUnique returns a sorted copy of names without repeats.
func sortedUnique(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
