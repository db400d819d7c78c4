package preview

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/olmsync/olmsync/internal/testenv"
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
