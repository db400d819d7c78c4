package install

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// OwnerLabels are the labels OLM puts on what it makes for a CSV (OLM's ownerutil.OwnerLabel):
// olm.owner, olm.owner.namespace, olm.owner.kind=ClusterServiceVersion and olm.managed=true.
// Cluster-scoped objects cannot carry an owner reference to a namespaced CSV, so these labels
// are how the CSV's cleanup finds them.
func OwnerLabels(csv *v1alpha1.ClusterServiceVersion) map[string]string {
	return map[string]string{
		groups.OwnerLabel:          groups.LabelValue(csv.Name),
		groups.OwnerNamespaceLabel: csv.Namespace,
		groups.OwnerKindLabel:      v1alpha1.ClusterServiceVersionKind,
		groups.ManagedLabel:        groups.ManagedLabelValue,
	}
}

// OwnerSelector is the label set that selects what OwnerLabels marked, olm.managed aside (OLM's
// CSVOwnerSelector), so that objects labelled by OLM itself are found too.
func OwnerSelector(csv *v1alpha1.ClusterServiceVersion) map[string]string {
	return map[string]string{
		groups.OwnerLabel:          groups.LabelValue(csv.Name),
		groups.OwnerNamespaceLabel: csv.Namespace,
		groups.OwnerKindLabel:      v1alpha1.ClusterServiceVersionKind,
	}
}

// OwnerReference is the non-blocking owner reference OLM puts on the namespaced objects of a
// CSV: deleting the CSV garbage-collects them, and nothing waits for them.
func OwnerReference(csv *v1alpha1.ClusterServiceVersion) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         v1alpha1.SchemeGroupVersion.String(),
		Kind:               v1alpha1.ClusterServiceVersionKind,
		Name:               csv.Name,
		UID:                csv.UID,
		Controller:         ptr.To(false),
		BlockOwnerDeletion: ptr.To(false),
	}
}

// OwnedByCSV returns the names of the CSVs among an object's owner references.
func OwnedByCSV(refs []metav1.OwnerReference) []string {
	var out []string
	for _, r := range refs {
		if r.Kind == v1alpha1.ClusterServiceVersionKind && IsOperatorsGroup(r.APIVersion) {
			out = append(out, r.Name)
		}
	}
	return out
}

// IsOperatorsGroup reports whether an owner reference's apiVersion is in operators.coreos.com.
func IsOperatorsGroup(apiVersion string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == v1alpha1.GroupName
}

// MergeOwners returns desired's owner references followed by existing's that do not name a
// CSV: a deployment or role belongs to one CSV at a time, and the CSV replacing another takes
// over its same-named objects, while owners set by others are kept.
func MergeOwners(existing, desired []metav1.OwnerReference) []metav1.OwnerReference {
	out := append([]metav1.OwnerReference(nil), desired...)
	for _, r := range existing {
		if r.Kind == v1alpha1.ClusterServiceVersionKind && IsOperatorsGroup(r.APIVersion) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// HasOwnerUID reports whether refs name csv itself (by UID).
func HasOwnerUID(refs []metav1.OwnerReference, csv *v1alpha1.ClusterServiceVersion) bool {
	for _, r := range refs {
		if r.UID == csv.UID {
			return true
		}
	}
	return false
}

// AddOwner returns refs with csv's reference added when missing, other owners kept (a service
// account may be shared along a replacement chain, as OLM's InstallPlans leave it).
func AddOwner(refs []metav1.OwnerReference, csv *v1alpha1.ClusterServiceVersion) []metav1.OwnerReference {
	for _, r := range refs {
		if r.UID == csv.UID && r.Kind == v1alpha1.ClusterServiceVersionKind {
			return refs
		}
	}
	return append(append([]metav1.OwnerReference(nil), refs...), OwnerReference(csv))
}
