package rbac_test

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/olmsync/olmsync/olm/rbac"
)

func rule(verbs, groups, resources []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
}

func l(s ...string) []string { return s }

func role(ns, name string, rules ...rbacv1.PolicyRule) rbacv1.Role {
	return rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func clusterRole(name string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func sa(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

func binding(ns, name, kind, roleName string, subjects ...rbacv1.Subject) rbacv1.RoleBinding {
	return rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName},
		Subjects:   subjects,
	}
}

func clusterBinding(name, roleName string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
		Subjects:   subjects,
	}
}

func TestServiceAccountUser(t *testing.T) {
	u := rbac.ServiceAccount("ns", "installer")
	if u.Name != "system:serviceaccount:ns:installer" {
		t.Errorf("name %q", u.Name)
	}
	want := []string{"system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"}
	if len(u.Groups) != len(want) {
		t.Fatalf("groups %v, want %v", u.Groups, want)
	}
	for i := range want {
		if u.Groups[i] != want[i] {
			t.Errorf("groups %v, want %v", u.Groups, want)
		}
	}
}

func TestAuthorize(t *testing.T) {
	u := rbac.ServiceAccount("ns", "installer")
	createCSV := rbac.Request{Verb: "create", Group: "operators.coreos.com", Resource: "clusterserviceversions", Namespace: "ns"}
	getRole := rbac.Request{Verb: "get", Group: "rbac.authorization.k8s.io", Resource: "roles", Name: "r", Namespace: "ns"}
	createCR := rbac.Request{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}
	all := rule(l("*"), l("*"), l("*"))
	csvs := rule(l("create"), l("operators.coreos.com"), l("clusterserviceversions"))
	for _, tc := range []struct {
		name   string
		policy rbac.Policy
		req    rbac.Request
		want   rbac.Decision
	}{
		{name: "nothing bound", req: createCSV},
		{
			name: "role in the namespace",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("ns", "r", csvs)},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "installer"))},
			},
			req: createCSV, want: rbac.Decision{Allowed: true},
		},
		{
			name: "binding of another namespace",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("other", "r", all)},
				RoleBindings: []rbacv1.RoleBinding{binding("other", "b", "Role", "r", sa("ns", "installer"))},
			},
			req: createCSV,
		},
		{
			name: "role of another namespace with the same name",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("other", "r", all)},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "installer"))},
			},
			req:  createCSV,
			want: rbac.Decision{Reason: `RBAC: role.rbac.authorization.k8s.io "r" not found`},
		},
		{
			name: "service account subject without namespace: the binding's",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("ns", "r", csvs)},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("", "installer"))},
			},
			req: createCSV, want: rbac.Decision{Allowed: true},
		},
		{
			name: "another service account",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("ns", "r", all)},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "default"))},
			},
			req: createCSV,
		},
		{
			name: "cluster role through a role binding: the namespace only",
			policy: rbac.Policy{
				ClusterRoles: []rbacv1.ClusterRole{clusterRole("admin", all)},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "ClusterRole", "admin", sa("ns", "installer"))},
			},
			req: createCR,
		},
		{
			name: "cluster role through a role binding allows in the namespace",
			policy: rbac.Policy{
				ClusterRoles: []rbacv1.ClusterRole{clusterRole("admin", all)},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "ClusterRole", "admin", sa("ns", "installer"))},
			},
			req: createCSV, want: rbac.Decision{Allowed: true},
		},
		{
			name: "cluster role binding to the namespace's service accounts group",
			policy: rbac.Policy{
				ClusterRoles:        []rbacv1.ClusterRole{clusterRole("c", rule(l("create"), l("rbac.authorization.k8s.io"), l("clusterroles")))},
				ClusterRoleBindings: []rbacv1.ClusterRoleBinding{clusterBinding("b", "c", rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "system:serviceaccounts:ns"})},
			},
			req: createCR, want: rbac.Decision{Allowed: true},
		},
		{
			name: "cluster role binding to a service account without namespace matches nobody",
			policy: rbac.Policy{
				ClusterRoles:        []rbacv1.ClusterRole{clusterRole("c", all)},
				ClusterRoleBindings: []rbacv1.ClusterRoleBinding{clusterBinding("b", "c", sa("", "installer"))},
			},
			req: createCR,
		},
		{
			name: "user subject",
			policy: rbac.Policy{
				ClusterRoles:        []rbacv1.ClusterRole{clusterRole("c", all)},
				ClusterRoleBindings: []rbacv1.ClusterRoleBinding{clusterBinding("b", "c", rbacv1.Subject{Kind: rbacv1.UserKind, Name: "system:serviceaccount:ns:installer"})},
			},
			req: createCR, want: rbac.Decision{Allowed: true},
		},
		{
			name: "missing cluster role",
			policy: rbac.Policy{
				ClusterRoleBindings: []rbacv1.ClusterRoleBinding{clusterBinding("b", "gone", sa("ns", "installer"))},
			},
			req:  createCR,
			want: rbac.Decision{Reason: `RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found`},
		},
		{
			name: "resourceNames do not allow a create",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("ns", "r", rule(l("*"), l("operators.coreos.com"), l("clusterserviceversions"), "x"))},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "installer"))},
			},
			req: createCSV,
		},
		{
			name: "resourceNames allow that name",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("ns", "r", rule(l("get"), l("rbac.authorization.k8s.io"), l("roles"), "r"))},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "installer"))},
			},
			req: getRole, want: rbac.Decision{Allowed: true},
		},
		{
			name: "another verb",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("ns", "r", rule(l("get", "list"), l("*"), l("*")))},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "installer"))},
			},
			req: createCSV,
		},
		{
			name: "another group",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("ns", "r", rule(l("*"), l(""), l("*")))},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "installer"))},
			},
			req: createCSV,
		},
		{
			name: "a subresource rule does not allow the resource",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("ns", "r", rule(l("*"), l("*"), l("clusterserviceversions/status", "*/status")))},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "installer"))},
			},
			req: createCSV,
		},
		{
			name: "*/subresource allows the subresource",
			policy: rbac.Policy{
				Roles:        []rbacv1.Role{role("ns", "r", rule(l("update"), l("*"), l("*/status")))},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "installer"))},
			},
			req:  rbac.Request{Verb: "update", Group: "operators.coreos.com", Resource: "clusterserviceversions", Subresource: "status", Name: "x", Namespace: "ns"},
			want: rbac.Decision{Allowed: true},
		},
		{
			name: "nonResourceURLs allow no resource request",
			policy: rbac.Policy{
				ClusterRoles:        []rbacv1.ClusterRole{clusterRole("c", rbacv1.PolicyRule{Verbs: l("*"), NonResourceURLs: l("*")})},
				ClusterRoleBindings: []rbacv1.ClusterRoleBinding{clusterBinding("b", "c", rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "system:authenticated"})},
			},
			req: createCR,
		},
		{
			name: "an aggregated cluster role is read as its rules",
			policy: rbac.Policy{
				ClusterRoles: []rbacv1.ClusterRole{
					{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, AggregationRule: &rbacv1.AggregationRule{
						ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"x": "true"}}},
					}},
					{ObjectMeta: metav1.ObjectMeta{Name: "part", Labels: map[string]string{"x": "true"}}, Rules: []rbacv1.PolicyRule{all}},
				},
				RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "ClusterRole", "agg", sa("ns", "installer"))},
			},
			req: createCSV,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.policy.Authorize(u, tc.req); got != tc.want {
				t.Errorf("Authorize = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestForbidden holds the API server's words for a refused request
// (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go forbiddenMessage, and
// apimachinery's NewForbidden); the controller's envtest test (TestScopedInstall) shows the
// same bytes from a real kube-apiserver.
func TestForbidden(t *testing.T) {
	u := rbac.ServiceAccount("ns", "installer")
	for _, tc := range []struct {
		req    rbac.Request
		reason string
		want   string
	}{
		{
			req:  rbac.Request{Verb: "create", Group: "operators.coreos.com", Resource: "clusterserviceversions", Namespace: "ns"},
			want: `clusterserviceversions.operators.coreos.com is forbidden: User "system:serviceaccount:ns:installer" cannot create resource "clusterserviceversions" in API group "operators.coreos.com" in the namespace "ns"`,
		},
		{
			req:  rbac.Request{Verb: "create", Resource: "serviceaccounts", Namespace: "ns"},
			want: `serviceaccounts is forbidden: User "system:serviceaccount:ns:installer" cannot create resource "serviceaccounts" in API group "" in the namespace "ns"`,
		},
		{
			req:    rbac.Request{Verb: "update", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "c"},
			reason: `RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found`,
			want:   `clusterroles.rbac.authorization.k8s.io "c" is forbidden: User "system:serviceaccount:ns:installer" cannot update resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found`,
		},
	} {
		if got := rbac.Forbidden(u, tc.req, rbac.Decision{Reason: tc.reason}).Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
