package rbac_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/rbac"
)

// escalationCase is one write of an RBAC object by a user, in the cluster of
// escalationManifests.
type escalationCase struct {
	name string
	user string // a ServiceAccount of the namespace
	obj  client.Object
}

// escalationManifests: in namespace ns, the ServiceAccount installer may write RBAC and holds
// get and list on ConfigMaps (and bindings to a Role and a ClusterRole that do not exist);
// escalator may also escalate Roles, binder may bind the ClusterRole big, aggregator may
// write RBAC and escalate ClusterRoles (and holds nothing else).
func escalationManifests(ns string) string {
	return fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s-rbac-writer}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles, rolebindings, clusterroles, clusterrolebindings], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s-rbac-writer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s-rbac-writer}
subjects:
- {kind: ServiceAccount, namespace: %[1]s, name: installer}
- {kind: ServiceAccount, namespace: %[1]s, name: escalator}
- {kind: ServiceAccount, namespace: %[1]s, name: binder}
- {kind: ServiceAccount, namespace: %[1]s, name: aggregator}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s-escalate-clusterroles}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], verbs: [escalate]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s-escalate-clusterroles}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s-escalate-clusterroles}
subjects:
- {kind: ServiceAccount, namespace: %[1]s, name: aggregator}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s-big}
rules:
- {apiGroups: [""], resources: [secrets], verbs: ["*"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {namespace: %[1]s, name: reader}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get, list]}
- {apiGroups: [apps], resources: [deployments], verbs: [get], resourceNames: [web]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {namespace: %[1]s, name: reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {kind: ServiceAccount, name: installer}
- {kind: ServiceAccount, name: escalator}
- {kind: ServiceAccount, name: binder}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {namespace: %[1]s, name: dangling}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: gone}
subjects:
- {kind: ServiceAccount, name: installer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s-dangling}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s-gone}
subjects:
- {kind: ServiceAccount, namespace: %[1]s, name: installer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {namespace: %[1]s, name: escalate}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [escalate]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {namespace: %[1]s, name: escalate}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: escalate}
subjects:
- {kind: ServiceAccount, name: escalator}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {namespace: %[1]s, name: bind}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], verbs: [bind], resourceNames: [%[1]s-big]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {namespace: %[1]s, name: bind}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: bind}
subjects:
- {kind: ServiceAccount, name: binder}
`, ns)
}

func escalationCases(ns string) []escalationCase {
	objRole := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	}
	bindTo := func(name, kind, roleName string) *rbacv1.RoleBinding {
		b := binding(ns, name, kind, roleName, sa(ns, "operator"))
		return &b
	}
	return []escalationCase{
		{"a role with rules held", "installer", objRole("same", rule(l("get"), l(""), l("configmaps")))},
		{"a role with more verbs and another resource", "installer", objRole("more",
			rule(l("get", "list", "delete", "watch"), l(""), l("configmaps")), rule(l("get"), l(""), l("secrets")))},
		{"a role with a name not held", "installer", objRole("names", rule(l("get"), l("apps"), l("deployments"), "web", "db"))},
		{"a cluster role with non-resource URLs", "installer", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-urls"},
			Rules: []rbacv1.PolicyRule{{Verbs: l("get"), NonResourceURLs: l("/healthz", "/metrics")}, rule(l("get", "list"), l(""), l("secrets"))}}},
		{"a cluster role with rules held only in the namespace", "installer",
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-cluster"}, Rules: []rbacv1.PolicyRule{rule(l("get"), l(""), l("configmaps"))}}},
		{"a binding of a cluster role not held", "installer", bindTo("big", "ClusterRole", ns+"-big")},
		{"a binding of a role held", "installer", bindTo("reader-too", "Role", "reader")},
		{"a binding of a role that does not exist", "installer", bindTo("nothing", "Role", "nothing")},
		{"a cluster role binding", "installer", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-big"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ns + "-big"}, Subjects: []rbacv1.Subject{sa(ns, "operator")}}},
		{"a role not held, by one who may escalate", "escalator", objRole("escalated", rule(l("*"), l(""), l("secrets")))},
		{"a binding of a role not held, by one who may bind it", "binder", bindTo("bound", "ClusterRole", ns+"-big")},
		{"a binding not held, by one who may bind another", "binder", bindTo("other", "Role", "escalate")},
		// An aggregationRule can gather any rule, so it takes every right ("*" on "*.*" and
		// on every URL), whatever the role's own rules.
		{"an aggregated cluster role with no rules of its own", "installer", aggregated(ns + "-aggregated")},
		{"an aggregated cluster role, by one who may escalate cluster roles", "aggregator", aggregated(ns + "-aggregated")},
	}
}

// aggregated is a ClusterRole with no rules of its own that aggregates the roles labelled
// for it.
func aggregated(name string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"aggregate-to": name}}},
	}}
}

// TestEscalationIsTheAPIServers: for each write, Policy.Escalation, given the cluster's RBAC,
// says what a real kube-apiserver says to the same write (a dry run, as the ServiceAccount
// with a token's groups), byte for byte — nil where the server accepts it.
func TestEscalationIsTheAPIServers(t *testing.T) {
	env := testenv.Get(t)
	ns := fmt.Sprintf("escalation-%d", time.Now().UnixNano()%1000000)
	env.Create(t, escalationManifests(ns))
	ctx := context.Background()
	p := olmtest.ClusterRBAC(t, env)
	refused := 0
	for _, tc := range escalationCases(ns) {
		t.Run(tc.name, func(t *testing.T) {
			u := rbac.ServiceAccount(ns, tc.user)
			cfg := rest.CopyConfig(env.Config)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: u.Name, Groups: u.Groups}
			c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if err := c.Create(ctx, tc.obj.DeepCopyObject().(client.Object), client.DryRunAll); err != nil {
				want = err.Error()
				refused++
			}
			got := ""
			if err := p.Escalation(u, tc.obj.GetNamespace(), tc.obj); err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("Escalation:\n%s\nthe API server:\n%s", got, want)
			}
		})
	}
	if refused == 0 {
		t.Error("the API server refused nothing: the cases do not exercise the check")
	}
}

// TestEscalation holds the API server's words (TestEscalationIsTheAPIServers shows the same
// bytes from a real kube-apiserver): the missing rules compacted per group and resource,
// sorted, one per line; a binding of a role that does not exist fails with the registry's
// NotFound; the roles the user's bindings name that do not exist follow as resolution errors
// — each NotFound worded with the resource being written, as the registry words it.
func TestEscalation(t *testing.T) {
	u := rbac.ServiceAccount("ns", "installer")
	p := rbac.Policy{
		Roles: []rbacv1.Role{role("ns", "reader", rule(l("get"), l(""), l("configmaps")))},
		RoleBindings: []rbacv1.RoleBinding{
			binding("ns", "reader", "Role", "reader", sa("ns", "installer")),
			binding("ns", "dangling", "Role", "gone", sa("ns", "installer")),
		},
	}
	groups := `(groups=["system:serviceaccounts" "system:serviceaccounts:ns" "system:authenticated"])`
	for _, tc := range []struct {
		name string
		obj  any
		want string
	}{
		{"held", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Rules: []rbacv1.PolicyRule{rule(l("get"), l(""), l("configmaps"))}}, ""},
		{
			"not held",
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Rules: []rbacv1.PolicyRule{
				rule(l("get", "delete", "list"), l(""), l("configmaps")), rule(l("get"), l("apps"), l("deployments"), "web"),
			}},
			`roles.rbac.authorization.k8s.io "r" is forbidden: user "system:serviceaccount:ns:installer" ` + groups +
				` is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["configmaps"], Verbs:["delete" "list"]}
{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}; resolution errors: [roles.rbac.authorization.k8s.io "gone" not found]`,
		},
		{
			"binding of a missing role",
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "nothing"}},
			`rolebindings.rbac.authorization.k8s.io "nothing" not found`,
		},
		{"system:masters may", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Rules: []rbacv1.PolicyRule{rule(l("*"), l("*"), l("*"))}}, "masters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			who := u
			want := tc.want
			if want == "masters" {
				who.Groups = append(who.Groups, "system:masters")
				want = ""
			}
			got := ""
			if err := p.Escalation(who, "ns", tc.obj); err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}
