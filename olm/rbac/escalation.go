package rbac

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// systemMasters is the group the API server lets escalate (k8s.io/apiserver's
// user.SystemPrivilegedGroup).
const systemMasters = "system:masters"

// Escalation is the API server's escalation check on a write of an RBAC object
// (k8s.io/kubernetes pkg/registry/rbac, the policybased storages): it refuses a Role or
// ClusterRole whose rules u does not hold — unless u is in system:masters or may "escalate"
// that kind — and a RoleBinding or ClusterRoleBinding of a role whose rules u does not hold —
// unless u is in system:masters or may "bind" that role. namespace is the object's (empty for
// the cluster kinds). It returns the API server's error, byte for byte, or nil; objects of
// other types are not checked.
func (p Policy) Escalation(u User, namespace string, obj any) error {
	if slices.Contains(u.Groups, systemMasters) {
		return nil
	}
	switch o := obj.(type) {
	case *rbacv1.Role:
		return p.grants(u, "roles", namespace, o.Name, o.Rules, false)
	case *rbacv1.ClusterRole:
		return p.grants(u, "clusterroles", "", o.Name, o.Rules, o.AggregationRule != nil && len(o.AggregationRule.ClusterRoleSelectors) > 0)
	case *rbacv1.RoleBinding:
		return p.binds(u, "rolebindings", namespace, o.Name, o.RoleRef)
	case *rbacv1.ClusterRoleBinding:
		return p.binds(u, "clusterrolebindings", "", o.Name, o.RoleRef)
	}
	return nil
}

// grants is the check on a Role or ClusterRole (RoleEscalationAuthorized, then
// ConfirmNoEscalation). The "escalate" request is a create's: it names no object. A
// ClusterRole that aggregates others can gather any rule, so it also takes every right
// (the clusterrole storage's fullAuthority).
func (p Policy) grants(u User, resource, namespace, name string, rules []rbacv1.PolicyRule, aggregates bool) error {
	if p.Authorize(u, Request{Verb: "escalate", Group: rbacv1.GroupName, Resource: resource, Namespace: namespace}).Allowed {
		return nil
	}
	if err := p.confirmNoEscalation(u, resource, namespace, name, rules); err != nil || !aggregates {
		return err
	}
	owner, _ := p.rulesFor(u, namespace, resource)
	if covered, _ := validation.Covers(owner, fullAuthority); !covered {
		return apierrors.NewForbidden(rbacv1.Resource(resource), name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
	}
	return nil
}

// fullAuthority is every right: any verb on any resource of any group, and on any URL.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
	{Verbs: []string{rbacv1.VerbAll}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
}

// binds is the check on a binding (BindingAuthorized, then ConfirmNoEscalation on the
// rules of the role it binds, read as the registry reads them: a role that does not exist
// fails the write with the registry's NotFound, worded with the binding's resource).
func (p Policy) binds(u User, resource, namespace, name string, ref rbacv1.RoleRef) error {
	roleResource := map[string]string{"Role": "roles", "ClusterRole": "clusterroles"}[ref.Kind]
	if roleResource != "" && p.Authorize(u, Request{Verb: "bind", Group: ref.APIGroup, Resource: roleResource, Name: ref.Name, Namespace: namespace}).Allowed {
		return nil
	}
	rules, err := p.lookupRules(ref, namespace, resource, resource)
	if err != nil {
		return err
	}
	return p.confirmNoEscalation(u, resource, namespace, name, rules)
}

// confirmNoEscalation is ConfirmNoEscalation (pkg/registry/rbac/validation/rule.go) inside
// the storages' Forbidden: the rules u holds in namespace must cover rules; the missing ones
// are listed compacted, one per line, sorted.
func (p Policy) confirmNoEscalation(u User, resource, namespace, name string, rules []rbacv1.PolicyRule) error {
	owner, resolutionErr := p.rulesFor(u, namespace, resource)
	covered, missing := validation.Covers(owner, rules)
	if covered {
		return nil
	}
	var described []string
	for _, r := range compactRules(missing) {
		described = append(described, compactString(r))
	}
	slices.Sort(described)
	described = slices.Compact(described)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.Name, u.Groups, strings.Join(described, "\n"))
	if resolutionErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", []error{resolutionErr})
	}
	return apierrors.NewForbidden(rbacv1.Resource(resource), name, errors.New(msg))
}

// rulesFor are the rules u holds in namespace (cluster-wide only when it is empty), and the
// registry's errors for the roles its bindings name that do not exist (RulesFor). The
// registry words a NotFound with the resource of the request it serves: resource, the
// kind being written, whatever kind of role is missing.
func (p Policy) rulesFor(u User, namespace, resource string) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	add := func(ref rbacv1.RoleRef, bindingNamespace string) {
		r, err := p.lookupRules(ref, bindingNamespace, resource, resource)
		if err != nil {
			errs = append(errs, err)
		}
		rules = append(rules, r...)
	}
	for i := range p.ClusterRoleBindings {
		if b := &p.ClusterRoleBindings[i]; appliesTo(u, b.Subjects, "") {
			add(b.RoleRef, "")
		}
	}
	if namespace != "" {
		for i := range p.RoleBindings {
			if b := &p.RoleBindings[i]; b.Namespace == namespace && appliesTo(u, b.Subjects, namespace) {
				add(b.RoleRef, namespace)
			}
		}
	}
	return rules, kerrors.NewAggregate(errs)
}

// compactRules merges the rules that name one API group and one resource, and nothing but
// verbs, into one rule per group and resource (CompactRules,
// pkg/registry/rbac/validation/policy_compact.go).
func compactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	simple := map[[2]string]int{}
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
			out = append(out, r)
			continue
		}
		key := [2]string{r.APIGroups[0], r.Resources[0]}
		if i, ok := simple[key]; ok {
			out[i].Verbs = append(out[i].Verbs, r.Verbs...)
			continue
		}
		simple[key] = len(out)
		out = append(out, *r.DeepCopy())
	}
	return out
}

// compactString is how the escalation error names a rule (CompactString,
// pkg/apis/rbac/v1/evaluation_helpers.go): its non-empty fields, each as a quoted list.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	for _, f := range []struct {
		name   string
		values []string
	}{
		{"APIGroups", r.APIGroups}, {"Resources", r.Resources}, {"NonResourceURLs", r.NonResourceURLs},
		{"ResourceNames", r.ResourceNames}, {"Verbs", r.Verbs},
	} {
		if len(f.values) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", f.name, f.values))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
