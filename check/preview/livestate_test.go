package preview

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/extension"
)

// TestReadClusterCRDsServiceAccountsGlobalNamespace reads, from a real API server, what
// testdata/crd-state holds beyond OLM's kinds — the CRD with its stored versions, the
// ServiceAccount — and the global catalog namespace of OLM's catalog-operator Deployment.
func TestReadClusterCRDsServiceAccountsGlobalNamespace(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	folder := loadCRDState(t, nil)
	crd := folder.CRDs[0].DeepCopy()
	crd.ResourceVersion = ""
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-s"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "olm-live"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-s", Name: "installer"}},
		crd,
		catalogOperator("olm-live", "--namespace", "operators-global"),
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ReadCluster(ctx, env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if st.GlobalCatalogNamespace != "operators-global" || !st.CatalogSourcesListed {
		t.Errorf("global catalog namespace %q, catalog sources listed %v", st.GlobalCatalogNamespace, st.CatalogSourcesListed)
	}
	if got := st.CRD("widgets.example.com"); got == nil || !slices.Contains(got.Status.StoredVersions, "v1") {
		t.Errorf("CRD %+v", got)
	}
	if !slices.ContainsFunc(st.ServiceAccounts, func(sa corev1.ServiceAccount) bool { return sa.Namespace == "team-s" && sa.Name == "installer" }) {
		t.Errorf("service accounts %d, installer missing", len(st.ServiceAccounts))
	}
}

func catalogOperator(ns string, args ...string) *appsv1.Deployment {
	labels := map[string]string{"app": "catalog-operator"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: olmCatalogOperator}}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	d.Spec.Template.Labels = labels
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "catalog-operator", Image: "quay.io/operator-framework/olm", Command: []string{"/bin/catalog"}, Args: args}}
	return d
}

// TestReadClusterOLMv1: ClusterCatalogs and ClusterExtensions, with the bundle OLM v1
// installed (status.install.bundle), are read from a live cluster as from a folder; a
// cluster without OLM v1's CRDs has none, which is no error (the other live tests).
func TestReadClusterOLMv1(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	for _, kind := range []string{extension.KindClusterCatalog, extension.KindClusterExtension} {
		plural := strings.ToLower(kind) + "s"
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + "." + extension.Group},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: extension.Group, Scope: apiextensionsv1.ClusterScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: extension.Version, Served: true, Storage: true,
					Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptr.To(true),
					}},
				}},
			},
		}
		if err := env.Client.Create(ctx, crd); err != nil {
			t.Fatal(err)
		}
	}
	create := func(manifest string) *unstructured.Unstructured {
		t.Helper()
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
			t.Fatal(err)
		}
		status := u.Object["status"]
		// The CRDs were just made: the server serves their kinds once they are established.
		olmtest.Eventually(t, "create "+u.GetKind(), func() error { return env.Client.Create(ctx, u.DeepCopy()) })
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			t.Fatal(err)
		}
		if status != nil {
			u.Object["status"] = status
			if err := env.Client.Status().Update(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		return u
	}
	create("apiVersion: olm.operatorframework.io/v1\nkind: ClusterCatalog\nmetadata: {name: operatorhubio}\n" +
		"spec: {source: {type: Image, image: {ref: quay.io/operatorhubio/catalog:latest}}, priority: 10}\n")
	create("apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata: {name: argocd}\n" +
		"spec: {namespace: argocd, serviceAccount: {name: installer}, source: {sourceType: Catalog, catalog: {packageName: argocd-operator, version: '>=0.10.0'}}}\n" +
		"status: {install: {bundle: {name: argocd-operator.v0.11.0, version: 0.11.0}}}\n")

	st, err := ReadCluster(ctx, env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.ClusterCatalogs) != 1 || st.ClusterCatalogs[0].Name != "operatorhubio" || st.ClusterCatalogs[0].Spec.Priority != 10 {
		t.Errorf("ClusterCatalogs %+v", st.ClusterCatalogs)
	}
	if len(st.ClusterExtensions) != 1 {
		t.Fatalf("ClusterExtensions %+v", st.ClusterExtensions)
	}
	ce := st.ClusterExtensions[0]
	if ce.Spec.Source.Catalog == nil || ce.Spec.Source.Catalog.PackageName != "argocd-operator" || ce.Status.Install == nil || ce.Status.Install.Bundle.Version != "0.11.0" {
		t.Errorf("ClusterExtension %+v", ce)
	}
}
