package install

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
	"github.com/olmsync/olmsync/olm/groups"
)

// OperatorCondition is the OperatorCondition OLM's generator makes for a CSV (OLM
// pkg/controller/operators/operatorconditiongenerator_controller.go): named as the CSV, in
// its namespace, controlled by it (a non-blocking controller reference), listing the
// service accounts of its permissions — cluster permissions first, then namespaced ones,
// as OLM lists them, duplicates kept, "default" when none names one — and its deployments.
func OperatorCondition(csv *v1alpha1.ClusterServiceVersion) *operatorsv2.OperatorCondition {
	spec := csv.Spec.InstallStrategy.StrategySpec
	var sas []string
	for _, p := range spec.ClusterPermissions {
		if p.ServiceAccountName != "" {
			sas = append(sas, p.ServiceAccountName)
		}
	}
	for _, p := range spec.Permissions {
		if p.ServiceAccountName != "" {
			sas = append(sas, p.ServiceAccountName)
		}
	}
	if len(sas) == 0 {
		sas = []string{"default"}
	}
	var deployments []string
	for _, d := range spec.DeploymentSpecs {
		if d.Name != "" {
			deployments = append(deployments, d.Name)
		}
	}
	cond := &operatorsv2.OperatorCondition{
		ObjectMeta: metav1.ObjectMeta{Name: csv.Name, Namespace: csv.Namespace},
		Spec:       operatorsv2.OperatorConditionSpec{ServiceAccounts: sas, Deployments: deployments},
	}
	cond.OwnerReferences = []metav1.OwnerReference{controllerReference(
		v1alpha1.SchemeGroupVersion.String(), v1alpha1.ClusterServiceVersionKind, csv.Name, csv.UID)}
	return cond
}

// OperatorConditionRole is the Role OLM makes beside an OperatorCondition (OLM
// operatorcondition_controller.go, ensureOperatorConditionRole): it lets the operator get,
// update and patch its own OperatorCondition — only that one, and not its status, which is
// OLM's to write.
func OperatorConditionRole(cond *operatorsv2.OperatorCondition) *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: conditionObjectMeta(cond),
		Rules: []rbacv1.PolicyRule{{
			Verbs:         []string{"get", "update", "patch"},
			APIGroups:     []string{operatorsv2.GroupName},
			Resources:     []string{"operatorconditions"},
			ResourceNames: []string{cond.Name},
		}},
	}
}

// OperatorConditionRoleBinding binds OperatorConditionRole to the service accounts
// spec.serviceAccounts lists, in its order.
func OperatorConditionRoleBinding(cond *operatorsv2.OperatorCondition) *rbacv1.RoleBinding {
	subjects := []rbacv1.Subject{}
	for _, sa := range cond.Spec.ServiceAccounts {
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa})
	}
	return &rbacv1.RoleBinding{
		ObjectMeta: conditionObjectMeta(cond),
		Subjects:   subjects,
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: cond.Name, APIGroup: rbacv1.GroupName},
	}
}

// conditionObjectMeta is the metadata of the RBAC an OperatorCondition controls: its name
// and namespace, olm.managed=true (OLM's only label on them) and its controller reference.
func conditionObjectMeta(cond *operatorsv2.OperatorCondition) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      cond.Name,
		Namespace: cond.Namespace,
		Labels:    map[string]string{groups.ManagedLabel: groups.ManagedLabelValue},
		OwnerReferences: []metav1.OwnerReference{controllerReference(
			operatorsv2.SchemeGroupVersion.String(), operatorsv2.OperatorConditionKind, cond.Name, cond.UID)},
	}
}

// controllerReference is OLM's ownerutil.AddOwner(obj, owner, false, true): the owner is the
// object's controller, and its deletion does not wait for the object.
func controllerReference(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: name, UID: uid,
		BlockOwnerDeletion: ptr.To(false), Controller: ptr.To(true),
	}
}
