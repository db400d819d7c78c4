package groups

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// What OLM leaves out of a copied CSV: the annotation holding the parent's whole manifest (big,
// and not the copy's) and OLM's operators.coreos.com/* component labels, which would make the
// copy look like a component of an operator in its namespace.
const (
	lastAppliedConfigurationAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	operatorsComponentLabelPrefix      = "operators.coreos.com/"
	messageCopiedFormat                = "The operator is running in %s but is managing this namespace"
)

// CopyOptions are the cluster-wide settings that shape copied CSVs.
type CopyOptions struct {
	// DisableCopiedCSVs is OLM's OLMConfig spec.features.disableCopiedCSVs: operators of
	// global (AllNamespaces) groups get copies only in ProtectedNamespaces, and their other
	// copies are removed. Copies of operators with explicit targets are not affected.
	DisableCopiedCSVs bool
	// ProtectedNamespaces keep copies of global operators even when copies are disabled.
	ProtectedNamespaces []string
}

// IsCopied reports whether a CSV is a copy OLM made in a target namespace, as OLM tells: its
// reason is Copied, it carries the olm.copiedFrom label, or its olm.operatorNamespace
// annotation names another namespace than its own.
func IsCopied(csv *v1alpha1.ClusterServiceVersion) bool {
	if csv.Status.Reason == v1alpha1.CSVReasonCopied {
		return true
	}
	if _, ok := csv.Labels[v1alpha1.CopiedLabelKey]; ok {
		return true
	}
	ns, ok := csv.Annotations[operatorsv1.OperatorGroupNamespaceAnnotationKey]
	return ok && ns != csv.Namespace
}

// IsUncopiable reports whether OLM holds back copies of a CSV: it has no phase yet, or it
// failed (or is itself a copy) for a reason that says it is not an active member of its group.
func IsUncopiable(csv *v1alpha1.ClusterServiceVersion) bool {
	if csv.Status.Phase == v1alpha1.CSVPhaseNone {
		return true
	}
	switch csv.Status.Reason {
	case v1alpha1.CSVReasonCopied, v1alpha1.CSVReasonInvalidInstallModes, v1alpha1.CSVReasonNoTargetNamespaces,
		v1alpha1.CSVReasonUnsupportedOperatorGroup, v1alpha1.CSVReasonNoOperatorGroup,
		v1alpha1.CSVReasonTooManyOperatorGroups, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict,
		v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs:
		return true
	}
	return false
}

// Copyable reports whether a CSV of group may have copies at all, whatever namespaces the
// cluster has: not when it is in another namespace than the group, is itself a copy or is
// uncopiable (IsUncopiable), nor when the group targets only its own namespace. When it is
// false, CopyNamespaces returns none and the caller need not list the cluster's namespaces.
func Copyable(csv *v1alpha1.ClusterServiceVersion, group *operatorsv1.OperatorGroup) bool {
	targets := group.Status.Namespaces
	return csv.Namespace == group.Namespace && !IsCopied(csv) && !IsUncopiable(csv) &&
		(len(targets) != 1 || targets[0] != group.Namespace)
}

// CopyNamespaces returns, sorted, the namespaces that get a copy of a member CSV of group:
// every namespace of the cluster (clusterNamespaces) in the group's targets except the
// group's own. None for an OwnNamespace group, none while the CSV is uncopiable (IsUncopiable)
// or is itself a copy, and for a global group with copies disabled only the protected
// namespaces.
func CopyNamespaces(csv *v1alpha1.ClusterServiceVersion, group *operatorsv1.OperatorGroup, clusterNamespaces []string, opts CopyOptions) []string {
	if !Copyable(csv, group) {
		return nil
	}
	targets := group.Status.Namespaces
	global := IsAllNamespaces(targets)
	var out []string
	for _, ns := range sortedUnique(clusterNamespaces) {
		switch {
		case ns == group.Namespace:
		case global && opts.DisableCopiedCSVs:
			if slices.Contains(opts.ProtectedNamespaces, ns) {
				out = append(out, ns)
			}
		case global || slices.Contains(targets, ns):
			out = append(out, ns)
		}
	}
	return out
}

// CopiedCSV returns the copy of parent that OLM keeps in namespace: the parent's name, spec and
// status, with reason Copied and the message "The operator is running in <parent namespace>
// but is managing this namespace"; the parent's annotations minus olm.targetNamespaces (so
// tenants do not see each other's targets, seed 000) and the last-applied-configuration; the
// parent's labels minus operators.coreos.com/* plus olm.copiedFrom=<parent namespace>.
func CopiedCSV(parent *v1alpha1.ClusterServiceVersion, namespace string) *v1alpha1.ClusterServiceVersion {
	c := &v1alpha1.ClusterServiceVersion{
		TypeMeta: parent.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:        parent.Name,
			Namespace:   namespace,
			Annotations: map[string]string{},
			Labels:      map[string]string{},
		},
		Spec:   *parent.Spec.DeepCopy(),
		Status: *parent.Status.DeepCopy(),
	}
	for k, v := range parent.Annotations {
		if k != operatorsv1.OperatorGroupTargetsAnnotationKey && k != lastAppliedConfigurationAnnotation {
			c.Annotations[k] = v
		}
	}
	for k, v := range parent.Labels {
		if !strings.HasPrefix(k, operatorsComponentLabelPrefix) {
			c.Labels[k] = v
		}
	}
	c.Labels[v1alpha1.CopiedLabelKey] = parent.Namespace
	c.Status.Reason = v1alpha1.CSVReasonCopied
	c.Status.Message = fmt.Sprintf(messageCopiedFormat, parent.Namespace)
	return c
}

// DanglingReason says why a copied CSV is to be deleted.
type DanglingReason string

const (
	// DanglingNoParentNamespace: the copy has no olm.operatorNamespace annotation naming its parent's namespace.
	DanglingNoParentNamespace DanglingReason = "NoParentNamespace"
	// DanglingParentGone: no CSV of the copy's name exists in the parent's namespace.
	DanglingParentGone DanglingReason = "ParentGone"
	// DanglingParentConflict: the parent failed with InterOperatorGroupOwnerConflict.
	DanglingParentConflict DanglingReason = "ParentConflict"
	// DanglingNotTargeted: the parent's olm.targetNamespaces no longer lists the copy's namespace.
	DanglingNotTargeted DanglingReason = "NotTargeted"
	// DanglingSameNamespace: the copy claims its own namespace as its parent's.
	DanglingSameNamespace DanglingReason = "SameNamespace"
	// DanglingCopiedCSVsDisabled: copies of global operators are disabled and the namespace is not protected.
	DanglingCopiedCSVsDisabled DanglingReason = "CopiedCSVsDisabled"
)

// Dangling is a copied CSV to delete and why.
type Dangling struct {
	Namespace, Name string
	Reason          DanglingReason
}

// DanglingCopies returns the copied CSVs among csvs (the cluster's CSVs, parents and copies
// alike) that OLM deletes, sorted by namespace and name: the parent is gone, failed with
// InterOperatorGroupOwnerConflict, or no longer targets the copy's namespace (seed 000 and
// OLM's removeDanglingChildCSVs), or copies of global operators are disabled (opts).
func DanglingCopies(csvs []v1alpha1.ClusterServiceVersion, opts CopyOptions) []Dangling {
	// Keyed by namespace/name, copies included: a copy that names its own namespace as its
	// parent's finds itself, and is deleted for that (DanglingSameNamespace), as in OLM.
	byKey := make(map[string]*v1alpha1.ClusterServiceVersion, len(csvs))
	for i := range csvs {
		byKey[csvs[i].Namespace+"/"+csvs[i].Name] = &csvs[i]
	}
	var out []Dangling
	for i := range csvs {
		c := &csvs[i]
		if !IsCopied(c) {
			continue
		}
		if reason := danglingReason(c, byKey, opts); reason != "" {
			out = append(out, Dangling{Namespace: c.Namespace, Name: c.Name, Reason: reason})
		}
	}
	slices.SortFunc(out, func(a, b Dangling) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out
}

// danglingReason checks a copy against its parent in OLM's order (removeDanglingChildCSVs),
// then against the copies-disabled setting; "" keeps the copy.
func danglingReason(c *v1alpha1.ClusterServiceVersion, csvs map[string]*v1alpha1.ClusterServiceVersion, opts CopyOptions) DanglingReason {
	parentNS, ok := c.Annotations[operatorsv1.OperatorGroupNamespaceAnnotationKey]
	if !ok {
		return DanglingNoParentNamespace
	}
	parent := csvs[parentNS+"/"+c.Name]
	if parent == nil {
		return DanglingParentGone
	}
	if parent.Status.Phase == v1alpha1.CSVPhaseFailed && parent.Status.Reason == v1alpha1.CSVReasonInterOperatorGroupOwnerConflict {
		return DanglingParentConflict
	}
	// A parent without annotations has not been through membership yet; OLM keeps its copies.
	targets, annotated := parentTargets(parent)
	if annotated && !IsAllNamespaces(targets) && !slices.Contains(targets, c.Namespace) {
		return DanglingNotTargeted
	}
	if parent.Namespace == c.Namespace {
		return DanglingSameNamespace
	}
	if annotated && IsAllNamespaces(targets) && opts.DisableCopiedCSVs && !slices.Contains(opts.ProtectedNamespaces, c.Namespace) {
		return DanglingCopiedCSVsDisabled
	}
	return ""
}

// parentTargets reads a parent CSV's olm.targetNamespaces; false when it has no annotations.
func parentTargets(parent *v1alpha1.ClusterServiceVersion) ([]string, bool) {
	if parent.Annotations == nil {
		return nil, false
	}
	return ParseTargetNamespacesAnnotation(parent.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey]), true
}
