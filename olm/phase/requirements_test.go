package phase

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/install"
)

// rbacCSV asks for one namespaced and one cluster permission for the service account "etcd".
func rbacCSV() *v1alpha1.ClusterServiceVersion {
	c := csvIn(v1alpha1.CSVPhasePending, "", "", now)
	c.UID = "uid-1"
	c.Spec.InstallStrategy.StrategyName = v1alpha1.InstallStrategyNameDeployment
	c.Spec.InstallStrategy.StrategySpec.Permissions = []v1alpha1.StrategyDeploymentPermissions{{
		ServiceAccountName: "etcd",
		Rules:              []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
	}}
	c.Spec.InstallStrategy.StrategySpec.ClusterPermissions = []v1alpha1.StrategyDeploymentPermissions{{
		ServiceAccountName: "etcd",
		Rules:              []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}},
	}}
	return c
}

// snapshotOf is what the cluster holds once install.PermissionsFor's objects are created.
func snapshotOf(t *testing.T, c *v1alpha1.ClusterServiceVersion) Snapshot {
	t.Helper()
	p, err := install.PermissionsFor(c)
	if err != nil {
		t.Fatal(err)
	}
	snap := Snapshot{
		ServiceAccounts: map[string]*corev1.ServiceAccount{},
		Roles:           p.Roles, RoleBindings: p.RoleBindings,
		ClusterRoles: p.ClusterRoles, ClusterRoleBindings: p.ClusterRoleBindings,
	}
	for i := range p.ServiceAccounts {
		snap.ServiceAccounts[p.ServiceAccounts[i].Name] = &p.ServiceAccounts[i]
	}
	return snap
}

func TestPermissionRequirements(t *testing.T) {
	ns := rule("namespaced", `{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}`)
	cl := rule("cluster", `{"verbs":["list"],"apiGroups":[""],"resources":["nodes"]}`)
	tests := []struct {
		name    string
		change  func(s *Snapshot)
		wantMet bool
		want    v1alpha1.RequirementStatus
	}{
		{
			name:    "what PermissionsFor creates meets the requirements",
			wantMet: true,
			want:    saStatus(v1alpha1.RequirementStatusReasonPresent, "", satisfied(ns), satisfied(cl)),
		},
		{
			name:   "no service account",
			change: func(s *Snapshot) { s.ServiceAccounts = nil },
			want:   saStatus(v1alpha1.RequirementStatusReasonNotPresent, msgSANotPresent),
		},
		{
			name: "a service account another csv owns",
			change: func(s *Snapshot) {
				s.ServiceAccounts["etcd"].OwnerReferences = []metav1.OwnerReference{{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion", Name: "other", UID: "uid-2"}}
			},
			want: saStatus(v1alpha1.RequirementStatusReasonPresentNotSatisfied, msgSAOwnedByOther),
		},
		{
			name:   "a role whose rules were edited",
			change: func(s *Snapshot) { s.Roles[0].Rules[0].Verbs = []string{"list"} },
			want:   saStatus(v1alpha1.RequirementStatusReasonPresentNotSatisfied, msgPolicyRuleNotSatisfied, unsatisfied(ns), satisfied(cl)),
		},
		{
			name:   "a cluster role binding that is gone",
			change: func(s *Snapshot) { s.ClusterRoleBindings = nil },
			want:   saStatus(v1alpha1.RequirementStatusReasonPresentNotSatisfied, msgPolicyRuleNotSatisfied, satisfied(ns), unsatisfied(cl)),
		},
		{
			name:   "a binding to another service account",
			change: func(s *Snapshot) { s.RoleBindings[0].Subjects[0].Name = "default" },
			want:   saStatus(v1alpha1.RequirementStatusReasonPresentNotSatisfied, msgPolicyRuleNotSatisfied, unsatisfied(ns), satisfied(cl)),
		},
		{
			name:   "a role without the csv's owner labels",
			change: func(s *Snapshot) { s.Roles[0].Labels = nil },
			want:   saStatus(v1alpha1.RequirementStatusReasonPresentNotSatisfied, msgPolicyRuleNotSatisfied, unsatisfied(ns), satisfied(cl)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := rbacCSV()
			snap := snapshotOf(t, c)
			if tt.change != nil {
				tt.change(&snap)
			}
			met, got := permissionRequirements(c, snap)
			if met != tt.wantMet {
				t.Errorf("met = %v, want %v", met, tt.wantMet)
			}
			if diff := cmp.Diff([]v1alpha1.RequirementStatus{tt.want}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPermissionRequirementsChangedRules: RBAC created for an older version of a permission
// (the CSV's rules changed since) does not meet the new one, although it has the same owner.
func TestPermissionRequirementsChangedRules(t *testing.T) {
	old := rbacCSV()
	snap := snapshotOf(t, old)
	c := rbacCSV()
	c.Spec.InstallStrategy.StrategySpec.Permissions[0].Rules[0].Verbs = []string{"get", "watch"}
	if met, _ := permissionRequirements(c, snap); met {
		t.Error("the old permission's role meets the changed one")
	}
}

type dependent struct {
	status  v1alpha1.StatusReason
	message string
}

func rule(scope, raw string) string { return scope + " rule:" + raw }

func satisfied(msg string) dependent {
	return dependent{v1alpha1.DependentStatusReasonSatisfied, msg}
}

func unsatisfied(msg string) dependent {
	return dependent{v1alpha1.DependentStatusReasonNotSatisfied, msg}
}

func saStatus(status v1alpha1.StatusReason, message string, deps ...dependent) v1alpha1.RequirementStatus {
	s := v1alpha1.RequirementStatus{Version: "v1", Kind: "ServiceAccount", Name: "etcd", Status: status, Message: message, Dependents: []v1alpha1.DependentStatus{}}
	for _, d := range deps {
		s.Dependents = append(s.Dependents, v1alpha1.DependentStatus{Group: rbacv1.GroupName, Kind: "PolicyRule", Version: "v1", Status: d.status, Message: d.message})
	}
	return s
}
