package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestStageOf(t *testing.T) {
	for _, tc := range []struct {
		gk   schema.GroupKind
		want Stage
	}{
		{schema.GroupKind{Kind: "Namespace"}, StageClusterSetup},
		{schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, StageClusterSetup},
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, StageClusterSetup},
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}, StageClusterSetup},
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, StageRest},
		{schema.GroupKind{Group: "operators.coreos.com", Kind: "OperatorGroup"}, StageOLMSetup},
		{schema.GroupKind{Group: "operators.coreos.com", Kind: "CatalogSource"}, StageOLMSetup},
		{schema.GroupKind{Group: "operators.coreos.com", Kind: "Subscription"}, StageSubscriptions},
		{schema.GroupKind{Group: "operators.coreos.com", Kind: "ClusterServiceVersion"}, StageRest},
		{schema.GroupKind{Kind: "ConfigMap"}, StageRest},
		{schema.GroupKind{Group: "etcd.database.coreos.com", Kind: "EtcdCluster"}, StageRest},
		// A kind named like a built-in but in another group is not the built-in.
		{schema.GroupKind{Group: "example.com", Kind: "Namespace"}, StageRest},
	} {
		if got, _ := StageOf(tc.gk); got != tc.want {
			t.Errorf("StageOf(%v) = %v, want %v", tc.gk, got, tc.want)
		}
	}
}

func TestStaged(t *testing.T) {
	in := []*unstructured.Unstructured{
		kindObj("v1", "ConfigMap", "ops", "settings"),
		kindObj("etcd.database.coreos.com/v1beta2", "EtcdCluster", "ops", "example"),
		kindObj("operators.coreos.com/v1alpha1", "Subscription", "ops", "etcd"),
		kindObj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "crb"),
		kindObj("operators.coreos.com/v1alpha1", "CatalogSource", "ops", "catalog"),
		kindObj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com"),
		kindObj("operators.coreos.com/v1", "OperatorGroup", "ops", "og"),
		kindObj("v1", "Namespace", "", "ops"),
		kindObj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "cr"),
		kindObj("v1", "Namespace", "", "other"),
	}
	var got [][]string
	for _, stage := range Staged(in) {
		var names []string
		for _, o := range stage {
			names = append(names, o.GetKind()+"/"+o.GetName())
		}
		got = append(got, names)
	}
	want := [][]string{
		{"Namespace/ops", "Namespace/other", "CustomResourceDefinition/widgets.example.com", "ClusterRole/cr", "ClusterRoleBinding/crb"},
		{"OperatorGroup/og", "CatalogSource/catalog"},
		{"Subscription/etcd"},
		{"ConfigMap/settings", "EtcdCluster/example"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Staged() (-want +got):\n%s", diff)
	}
	if got := Staged(in[:2]); len(got) != 1 {
		t.Errorf("Staged() of only the rest = %d stages, want 1 (empty stages left out)", len(got))
	}
	if got := Staged(nil); len(got) != 0 {
		t.Errorf("Staged(nil) = %d stages, want none", len(got))
	}
}

func TestPromisedBy(t *testing.T) {
	gk := schema.GroupKind{Group: "etcd.database.coreos.com", Kind: "EtcdCluster"}
	with := []*unstructured.Unstructured{kindObj("v1", "ConfigMap", "ops", "c"), kindObj("operators.coreos.com/v1alpha1", "Subscription", "ops", "etcd")}
	if !PromisedBy(with)(gk) {
		t.Error("a Sync with a Subscription does not promise custom kinds")
	}
	if PromisedBy(with[:1])(gk) {
		t.Error("a Sync without a Subscription promises custom kinds")
	}
}
