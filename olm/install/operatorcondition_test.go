package install

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
)

// TestOperatorCondition holds what OLM's generator writes for a CSV
// (operatorconditiongenerator_controller.go:88-150): named as the CSV, the CSV its
// controller, cluster permissions' service accounts before namespaced ones (strategyCSV has
// "etcd-operator" namespaced and "default" cluster-wide), the deployments by name.
func TestOperatorCondition(t *testing.T) {
	got, err := yaml.Marshal(OperatorCondition(strategyCSV()))
	if err != nil {
		t.Fatal(err)
	}
	want := `metadata:
  name: etcd.v0.9.4
  namespace: operators
  ownerReferences:
  - apiVersion: operators.coreos.com/v1alpha1
    blockOwnerDeletion: false
    controller: true
    kind: ClusterServiceVersion
    name: etcd.v0.9.4
    uid: uid-etcd
spec:
  deployments:
  - etcd-operator
  serviceAccounts:
  - default
  - etcd-operator
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("OperatorCondition (-want +got):\n%s", diff)
	}

	bare := &v1alpha1.ClusterServiceVersion{}
	bare.Name, bare.Namespace = "bare.v1", "ns"
	if sas := OperatorCondition(bare).Spec.ServiceAccounts; !cmp.Equal(sas, []string{"default"}) {
		t.Errorf("serviceAccounts of a csv without permissions = %v, want [default] (OLM generator line 135)", sas)
	}
}

// TestOperatorConditionRBAC holds the Role and RoleBinding OLM's OperatorCondition
// controller writes (operatorcondition_controller.go:126-224): olm.managed only, the
// OperatorCondition (operators.coreos.com/v2) their controller.
func TestOperatorConditionRBAC(t *testing.T) {
	cond := &operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Name: "etcd.v0.9.4", Namespace: "operators", UID: "uid-cond"}}
	cond.Spec.ServiceAccounts = []string{"etcd-operator", "default"}
	meta := metav1.ObjectMeta{
		Name: "etcd.v0.9.4", Namespace: "operators",
		Labels: map[string]string{"olm.managed": "true"},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "operators.coreos.com/v2", Kind: "OperatorCondition", Name: "etcd.v0.9.4", UID: "uid-cond",
			BlockOwnerDeletion: ptr.To(false), Controller: ptr.To(true),
		}},
	}
	wantRole := &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
		Verbs: []string{"get", "update", "patch"}, APIGroups: []string{"operators.coreos.com"},
		Resources: []string{"operatorconditions"}, ResourceNames: []string{"etcd.v0.9.4"},
	}}}
	if diff := cmp.Diff(wantRole, OperatorConditionRole(cond)); diff != "" {
		t.Errorf("Role (-want +got):\n%s", diff)
	}
	wantBinding := &rbacv1.RoleBinding{
		ObjectMeta: meta,
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "etcd-operator"}, {Kind: "ServiceAccount", Name: "default"}},
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "etcd.v0.9.4", APIGroup: "rbac.authorization.k8s.io"},
	}
	if diff := cmp.Diff(wantBinding, OperatorConditionRoleBinding(cond)); diff != "" {
		t.Errorf("RoleBinding (-want +got):\n%s", diff)
	}
}
