package rbac_test

import (
	"errors"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/rbac"
)

func step(group, kind, name string) v1alpha1.Step {
	return v1alpha1.Step{Resource: v1alpha1.StepResource{Group: group, Version: "v1", Kind: kind, Name: name}}
}

// rbacStep is the step of an RBAC object, with its manifest.
func rbacStep(kind, name, manifest string) v1alpha1.Step {
	s := step("rbac.authorization.k8s.io", kind, name)
	s.Resource.Manifest = manifest
	return s
}

// TestFirstRefused: the first step of a plan, in the executor's order, the account may not
// execute, with the executor's error around the API server's refusal.
func TestFirstRefused(t *testing.T) {
	u := rbac.ServiceAccount("ns", "installer")
	steps := []v1alpha1.Step{
		step("operators.coreos.com", "ClusterServiceVersion", "a.v1.0.0"),
		step("apiextensions.k8s.io", "CustomResourceDefinition", "alphas.example.com"),
		step("", "ServiceAccount", "a-operator"),
		rbacStep("Role", "a.v1.0.0-x", `{"rules":[{"apiGroups":[""],"resources":["serviceaccounts"],"verbs":["create"]}]}`),
		step("", "BundleSecret", "creds"),
		rbacStep("ClusterRole", "a.v1.0.0-y", `{"rules":[{"apiGroups":[""],"resources":["namespaces"],"verbs":["get"]}]}`),
	}
	// The operator's Role and its binding, as OLM makes them from a CSV's permissions.
	escalating := []v1alpha1.Step{
		rbacStep("Role", "a.v1.0.0-x", `{"metadata":{"name":"a.v1.0.0-x"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get","watch"]}]}`),
		rbacStep("RoleBinding", "a.v1.0.0-x", `{"metadata":{"name":"a.v1.0.0-x"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"a.v1.0.0-x"},"subjects":[{"kind":"ServiceAccount","name":"a-operator","namespace":"ns"}]}`),
	}
	grant := func(rules ...rbacv1.PolicyRule) rbac.Policy {
		return rbac.Policy{
			Roles:        []rbacv1.Role{role("ns", "r", rules...)},
			RoleBindings: []rbacv1.RoleBinding{binding("ns", "b", "Role", "r", sa("ns", "installer"))},
		}
	}
	create := func(group string, resources ...string) rbacv1.PolicyRule {
		return rule(l("create"), l(group), resources)
	}
	groups := `(groups=["system:serviceaccounts" "system:serviceaccounts:ns" "system:authenticated"])`
	for _, tc := range []struct {
		name   string
		steps  []v1alpha1.Step
		policy rbac.Policy
		exists map[string]bool
		want   *rbac.Refusal
		msg    string
	}{
		{
			name: "no rights: the CSV", want: &rbac.Refusal{Step: 0},
			msg: `error creating csv a.v1.0.0: clusterserviceversions.operators.coreos.com is forbidden: User "system:serviceaccount:ns:installer" cannot create resource "clusterserviceversions" in API group "operators.coreos.com" in the namespace "ns"`,
		},
		{
			name:   "the CSV only: the ServiceAccount, the CRD skipped",
			policy: grant(create("operators.coreos.com", "clusterserviceversions")),
			want:   &rbac.Refusal{Step: 2},
			msg:    `error creating service account: a-operator: serviceaccounts is forbidden: User "system:serviceaccount:ns:installer" cannot create resource "serviceaccounts" in API group "" in the namespace "ns"`,
		},
		{
			name:   "an existing ServiceAccount is read and updated",
			policy: grant(create("operators.coreos.com", "clusterserviceversions"), create("", "serviceaccounts")),
			exists: map[string]bool{"a-operator": true},
			want:   &rbac.Refusal{Step: 2},
			msg:    `error getting older version of service account: a-operator: serviceaccounts "a-operator" is forbidden: User "system:serviceaccount:ns:installer" cannot get resource "serviceaccounts" in API group "" in the namespace "ns"`,
		},
		{
			name:   "an existing CSV is left as it is",
			policy: grant(create("operators.coreos.com", "clusterserviceversions"), create("", "serviceaccounts", "secrets"), create("rbac.authorization.k8s.io", "roles")),
			exists: map[string]bool{"a.v1.0.0": true},
			want:   &rbac.Refusal{Step: 5},
			msg:    `error creating clusterrole a.v1.0.0-y: clusterroles.rbac.authorization.k8s.io is forbidden: User "system:serviceaccount:ns:installer" cannot create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`,
		},
		{
			name:   "a bundle secret is a Secret",
			policy: grant(create("operators.coreos.com", "clusterserviceversions"), create("", "serviceaccounts"), create("rbac.authorization.k8s.io", "roles")),
			want:   &rbac.Refusal{Step: 4},
			msg:    `error updating secret: creds: secrets is forbidden: User "system:serviceaccount:ns:installer" cannot create resource "secrets" in API group "" in the namespace "ns"`,
		},
		{
			name:   "a Role granting what the account does not hold",
			steps:  escalating,
			policy: grant(create("rbac.authorization.k8s.io", "roles", "rolebindings"), rule(l("get"), l(""), l("secrets"))),
			want:   &rbac.Refusal{Step: 0},
			msg: `error creating role a.v1.0.0-x: roles.rbac.authorization.k8s.io "a.v1.0.0-x" is forbidden: user "system:serviceaccount:ns:installer" ` + groups +
				" is attempting to grant RBAC permissions not currently held:\n" + `{APIGroups:[""], Resources:["secrets"], Verbs:["watch"]}`,
		},
		{
			name:   "a binding of the Role an earlier step made, which the account may escalate but not hold",
			steps:  escalating,
			policy: grant(create("rbac.authorization.k8s.io", "roles", "rolebindings"), rule(l("escalate"), l("rbac.authorization.k8s.io"), l("roles"))),
			want:   &rbac.Refusal{Step: 1},
			msg: `error creating rolebinding a.v1.0.0-x: rolebindings.rbac.authorization.k8s.io "a.v1.0.0-x" is forbidden: user "system:serviceaccount:ns:installer" ` + groups +
				" is attempting to grant RBAC permissions not currently held:\n" + `{APIGroups:[""], Resources:["secrets"], Verbs:["get" "watch"]}`,
		},
		{
			name:   "the Role and its binding, held",
			steps:  escalating,
			policy: grant(create("rbac.authorization.k8s.io", "roles", "rolebindings"), rule(l("get", "watch"), l(""), l("secrets"))),
		},
		{
			name: "every right",
			policy: rbac.Policy{
				ClusterRoles:        []rbacv1.ClusterRole{clusterRole("all", rule(l("*"), l("*"), l("*")))},
				ClusterRoleBindings: []rbacv1.ClusterRoleBinding{clusterBinding("b", "all", sa("ns", "installer"))},
			},
			exists: map[string]bool{"a-operator": true, "a.v1.0.0-x": true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := steps
			if tc.steps != nil {
				steps = tc.steps
			}
			got := tc.policy.FirstRefused(u, "ns", steps, func(s v1alpha1.Step) bool { return tc.exists[s.Resource.Name] })
			switch {
			case tc.want == nil && got != nil:
				t.Fatalf("refused step %d: %v", got.Step, got.Err)
			case tc.want == nil:
				return
			case got == nil:
				t.Fatalf("nothing refused, want step %d", tc.want.Step)
			}
			if got.Step != tc.want.Step || got.Err.Error() != tc.msg {
				t.Errorf("step %d: %s\nwant step %d: %s", got.Step, got.Err, tc.want.Step, tc.msg)
			}
		})
	}
}

// TestStepErrorIsOLMs: the executor's words for a failed request are OLM's StepEnsurer's,
// byte for byte (pkg/controller/operators/catalog/step_ensurer.go at HEAD of
// operator-lifecycle-manager: errorwrap.Wrapf(err, format, name) writes "<format>: <err>").
func TestStepErrorIsOLMs(t *testing.T) {
	cause := errors.New("boom")
	tests := []struct{ verb, kind, want string }{
		{"create", "ClusterServiceVersion", "error creating csv x: boom"},                    // :48
		{"create", "Subscription", "error creating subscription x: boom"},                    // :65
		{"create", "Secret", "error updating secret: x: boom"},                               // :126
		{"update", "Secret", "error updating secret: x: boom"},                               // :133
		{"create", "ServiceAccount", "error creating service account: x: boom"},              // :150
		{"get", "ServiceAccount", "error getting older version of service account: x: boom"}, // :159
		{"update", "ServiceAccount", "error updating service account: x: boom"},              // :180
		{"create", "Service", "error updating service: x: boom"},                             // :198
		{"create", "ClusterRole", "error creating clusterrole x: boom"},                      // :221
		{"update", "ClusterRole", "error updating clusterrole x: boom"},                      // :231
		{"create", "ClusterRoleBinding", "error creating clusterrolebinding x: boom"},        // :248
		{"create", "Role", "error creating role x: boom"},                                    // :275
		{"update", "RoleBinding", "error updating rolebinding x: boom"},                      // :305
		{"create", "PrometheusRule", "error creating unstructured object x: boom"},           // :322
		{"get", "PrometheusRule", "error getting unstructured object x: boom"},               // :328
		{"update", "PrometheusRule", "error updating unstructured object x: boom"},           // :337
		{"create", "ConfigMap", "error updating configmap: x: boom"},                         // :354
	}
	for _, tt := range tests {
		err := rbac.StepError(tt.verb, tt.kind, "x", cause)
		if err.Error() != tt.want || !errors.Is(err, cause) {
			t.Errorf("StepError(%s, %s) = %q, want %q (wrapping the cause)", tt.verb, tt.kind, err, tt.want)
		}
	}
}
