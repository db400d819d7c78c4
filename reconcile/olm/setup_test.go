package olm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/olmsync/olmsync/reconcile/olm"
)

// TestTransformCRD: the cached CRD keeps what the CSV controller's requirement checks read
// (versions served, conditions, the installed-alongside annotations, the UID) and loses the
// schemas, printer columns, kubectl's last-applied annotation and managedFields.
func TestTransformCRD(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	alongside := "operatorframework.io/installed-alongside-0123"
	version := func(name string, served bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{
			Name: name, Served: served, Storage: served,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object"}},
			}},
			AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}},
			Subresources:             &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		}
	}
	conditions := []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name: "things.example.com", UID: "u1", ManagedFields: managed,
			Annotations: map[string]string{alongside: "ns/things.v1", corev1.LastAppliedConfigAnnotation: `{"huge":"json"}`},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Kind: "Thing"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version("v1", true), version("v1beta1", false)},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: conditions},
	}
	want := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.example.com", UID: "u1", Annotations: map[string]string{alongside: "ns/things.v1"}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Kind: "Thing"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Subresources: crd.Spec.Versions[0].Subresources},
				{Name: "v1beta1", Subresources: crd.Spec.Versions[1].Subresources},
			},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: conditions},
	}
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", ManagedFields: managed,
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}"}}}
	for _, tc := range []struct {
		name    string
		in, out any
	}{
		{"crd", crd, want},
		// Only a CRD loses more than managedFields.
		{"other kind", deployment, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d",
			Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := olm.TransformCRD(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.out, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}
