package crdupgrade_test

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/olmsync/olmsync/olm/crdupgrade"
)

// FuzzDecodeAndCheck feeds arbitrary manifests to Decode, and whatever decodes into Check as
// both sides of an upgrade with an arbitrary custom resource: nothing may panic, and a CRD
// may always replace itself when no custom resource exists (unless its own status lists a
// stored version its spec does not have).
func FuzzDecodeAndCheck(f *testing.F) {
	f.Add(`apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: as.example.com}
spec: {group: example.com, version: v1, names: {kind: A, plural: as}, scope: Namespaced,
  validation: {openAPIV3Schema: {type: object, properties: {spec: {type: object, required: [x], properties: {x: {type: integer, minimum: 3}}}}}}}
`, `{"apiVersion":"example.com/v1","kind":"A","metadata":{"name":"a"},"spec":{"x":2}}`)
	f.Add(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"as.example.com"},"spec":{"group":"example.com","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"pattern":"("}}}]}}`, `{}`)
	f.Fuzz(func(t *testing.T, manifest, object string) {
		c, err := crdupgrade.Decode([]byte(manifest))
		if err != nil {
			return
		}
		var ce *crdupgrade.Error
		if _, err := crdupgrade.Check(c, c.DeepCopy(), nil); err != nil && (!errors.As(err, &ce) || ce.Reason != crdupgrade.ReasonStoredVersionRemoved) {
			t.Fatalf("a CRD may not replace itself: %v", err)
		}
		var u unstructured.Unstructured
		if u.UnmarshalJSON([]byte(object)) != nil {
			return
		}
		_, _ = crdupgrade.Check(c, c.DeepCopy(), []unstructured.Unstructured{u})
	})
}
