package resolve_test

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/olmsync/olmsync/olm/resolve"
)

// TestPermissionsHashes holds olm.permissions.hash as OLM's resolver computes it
// (pkg/controller/registry/resolver/rbac.go: PolicyRuleHashLabelValue,
// RoleReferenceAndSubjectHashLabelValue): base 62 of the SHA-224 of the rules' JSON, and of
// the JSON of {RoleRef, Subjects}. The literals were computed apart from the code, from
// the JSON Go writes for these values.
func TestPermissionsHashes(t *testing.T) {
	rules := []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	if got, want := resolve.PolicyRulesHash(rules), "3Y9YdhK7d3Fe0rjjaFPWtPIIUI2QxhrMcQX5Z1"; got != want {
		t.Errorf("PolicyRulesHash = %q, want %q", got, want)
	}
	ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "etcd.v1-etcd-operator-abc"}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "etcd-operator", Namespace: "team-a"}}
	if got, want := resolve.BindingHash(ref, subjects), "9yHtdpUHdMaqNYaqrp7nkKRpiADH5u0nLc0lls"; got != want {
		t.Errorf("BindingHash = %q, want %q", got, want)
	}
}
