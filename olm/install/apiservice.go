package install

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// APIServiceGVK is the kind of aggregated API registrations. olmsync reads and writes them
// unstructured, so that it does not need kube-aggregator's types.
var APIServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// The priorities OLM gives the APIServices it makes.
const (
	apiServiceGroupPriorityMinimum = 2000
	apiServiceVersionPriority      = 15
)

// ErrAPIServiceOwnerConflict is OLM's message for an owned APIService that exists and that the
// CSV may not adopt: the CSV fails with reason OwnerConflict.
var ErrAPIServiceOwnerConflict = errors.New("unable to adopt APIService")

// APIService is the APIService OLM makes for an owned API service of a CSV, laid over
// existing (nil when there is none; its other fields are kept): <version>.<group>, priorities
// 2000 and 15 when it is new (with annotations, those of the Subscription's spec.config),
// the CSV's owner labels and olm.managed, the Service in front of the deployment at the
// containerPort (443 when unset), and caBundle.
func APIService(csv *v1alpha1.ClusterServiceVersion, d v1alpha1.APIServiceDescription, existing *unstructured.Unstructured, annotations map[string]string, caPEM []byte) *unstructured.Unstructured {
	var u *unstructured.Unstructured
	if existing != nil {
		u = existing.DeepCopy()
	} else {
		u = &unstructured.Unstructured{Object: map[string]any{}}
		u.SetGroupVersionKind(APIServiceGVK)
		u.SetName(d.APIServiceName())
		_ = unstructured.SetNestedField(u.Object, d.Group, "spec", "group")
		_ = unstructured.SetNestedField(u.Object, d.Version, "spec", "version")
		_ = unstructured.SetNestedField(u.Object, int64(apiServiceGroupPriorityMinimum), "spec", "groupPriorityMinimum")
		_ = unstructured.SetNestedField(u.Object, int64(apiServiceVersionPriority), "spec", "versionPriority")
		if len(annotations) > 0 {
			u.SetAnnotations(maps.Clone(annotations))
		}
	}
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, OwnerLabels(csv))
	u.SetLabels(labels)
	_ = unstructured.SetNestedMap(u.Object, map[string]any{
		"namespace": csv.Namespace,
		"name":      ServiceName(d.DeploymentName),
		"port":      int64(containerPort(d.ContainerPort)),
	}, "spec", "service")
	_ = unstructured.SetNestedField(u.Object, base64.StdEncoding.EncodeToString(caPEM), "spec", "caBundle")
	return u
}

// APIServiceCABundle reads an APIService's spec.caBundle.
func APIServiceCABundle(u *unstructured.Unstructured) ([]byte, error) {
	s, _, _ := unstructured.NestedString(u.Object, "spec", "caBundle")
	if s == "" {
		return nil, errors.New("unable to find CA")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("apiservice %s: caBundle: %w", u.GetName(), err)
	}
	return b, nil
}

// APIServiceService reads the namespace and name of the Service an APIService names.
func APIServiceService(u *unstructured.Unstructured) (namespace, name string) {
	namespace, _, _ = unstructured.NestedString(u.Object, "spec", "service", "namespace")
	name, _, _ = unstructured.NestedString(u.Object, "spec", "service", "name")
	return namespace, name
}

// APIServiceAvailable reports whether an APIService's Available condition is True.
func APIServiceAvailable(u *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Available" {
			return m["status"] == "True"
		}
	}
	return false
}

// APIServiceAdoptable is OLM's IsAPIServiceAdoptable: an existing APIService may be taken by
// csv when its owner labels name a CSV, in csv's namespace, that is csv, the CSV csv replaces
// (replaced, nil when it does not exist), or its current owner when that one is Replacing or
// Deleting (owner: the CSV its labels name, nil when it does not exist). An APIService
// without owner labels is not adoptable.
func APIServiceAdoptable(labels map[string]string, csv, replaced, owner *v1alpha1.ClusterServiceVersion) bool {
	kind, ns, name := labels[groups.OwnerKindLabel], labels[groups.OwnerNamespaceLabel], labels[groups.OwnerLabel]
	if kind == "" || ns == "" || name == "" || kind != v1alpha1.ClusterServiceVersionKind || ns != csv.Namespace {
		return false
	}
	candidates := []string{groups.LabelValue(csv.Name)}
	if replaced != nil {
		candidates = append(candidates, groups.LabelValue(replaced.Name))
	}
	if owner != nil && (owner.Status.Phase == v1alpha1.CSVPhaseReplacing || owner.Status.Phase == v1alpha1.CSVPhaseDeleting) {
		candidates = append(candidates, groups.LabelValue(owner.Name))
	}
	for _, c := range candidates {
		if c == name {
			return true
		}
	}
	return false
}
