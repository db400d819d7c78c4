package rbac

import (
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
)

// User is who makes a request: a name and the groups the API server's authentication gives it.
type User struct {
	Name   string
	Groups []string
}

// The groups the API server's authentication gives every ServiceAccount token, and the prefix
// of a ServiceAccount's user name (k8s.io/apiserver/pkg/authentication/serviceaccount).
const (
	ServiceAccountUsernamePrefix = "system:serviceaccount:"
	AllServiceAccountsGroup      = "system:serviceaccounts"
	AllAuthenticated             = "system:authenticated"
)

// ServiceAccount is the user a ServiceAccount's token authenticates as:
// system:serviceaccount:<namespace>:<name>, in the groups system:serviceaccounts,
// system:serviceaccounts:<namespace> and system:authenticated. The InstallPlan controller
// impersonates exactly this user to execute a scoped install.
func ServiceAccount(namespace, name string) User {
	return User{
		Name:   ServiceAccountUsernamePrefix + namespace + ":" + name,
		Groups: []string{AllServiceAccountsGroup, AllServiceAccountsGroup + ":" + namespace, AllAuthenticated},
	}
}

// Request is a resource request as the authorizer sees it. Name is empty for a create (the
// request goes to the collection); Namespace is empty for a cluster-scoped resource.
type Request struct {
	Verb, Group, Resource, Subresource, Name, Namespace string
}

// Policy is the RBAC objects of a cluster (or what the caller knows of them). An aggregated
// ClusterRole is read as its rules, as the authorizer reads it: Kubernetes'
// clusterrole-aggregation controller writes them, and without it (envtest, a repository's
// manifests) they are what the manifest says.
type Policy struct {
	Roles               []rbacv1.Role
	ClusterRoles        []rbacv1.ClusterRole
	RoleBindings        []rbacv1.RoleBinding
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
}

// Decision is the authorizer's answer.
type Decision struct {
	Allowed bool
	// Reason is why nothing allowed it, as the RBAC authorizer reports it: "RBAC: " and the
	// bindings of the user whose role does not exist; empty when none.
	Reason string
}

// Authorize decides req for u as Kubernetes' RBAC authorizer does: the rules of every
// ClusterRoleBinding whose subjects include u, then those of every RoleBinding of the
// request's namespace whose subjects include u (its roleRef a Role of that namespace or a
// ClusterRole, read in the namespace only). A rule allows when its verbs, apiGroups,
// resources (resource, resource/subresource, "*", "*/subresource") and resourceNames match;
// nonResourceURLs rules allow no resource request. A binding that names a role which does
// not exist adds its error to the Reason, as the authorizer does.
func (p Policy) Authorize(u User, req Request) Decision {
	var errs []error
	for i := range p.ClusterRoleBindings {
		b := &p.ClusterRoleBindings[i]
		if !appliesTo(u, b.Subjects, "") {
			continue
		}
		rules, err := p.roleRules(b.RoleRef, "")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if anyAllows(rules, req) {
			return Decision{Allowed: true}
		}
	}
	if req.Namespace != "" {
		for i := range p.RoleBindings {
			b := &p.RoleBindings[i]
			if b.Namespace != req.Namespace || !appliesTo(u, b.Subjects, b.Namespace) {
				continue
			}
			rules, err := p.roleRules(b.RoleRef, b.Namespace)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if anyAllows(rules, req) {
				return Decision{Allowed: true}
			}
		}
	}
	d := Decision{}
	if len(errs) > 0 {
		d.Reason = fmt.Sprintf("RBAC: %v", kerrors.NewAggregate(errs))
	}
	return d
}

// Forbidden is the API server's refusal of req for u, byte for byte: the status error its
// authorization filter writes (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters).
func Forbidden(u User, req Request, d Decision) *apierrors.StatusError {
	resource := req.Resource
	if req.Subresource != "" {
		resource += "/" + req.Subresource
	}
	var msg string
	if req.Namespace != "" {
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", u.Name, req.Verb, resource, req.Group, req.Namespace)
	} else {
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", u.Name, req.Verb, resource, req.Group)
	}
	if d.Reason != "" {
		msg += ": " + d.Reason
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: req.Group, Resource: req.Resource}, req.Name, fmt.Errorf("%s", msg))
}

// roleRules are the rules of the role ref names; namespace is the binding's (empty for a
// ClusterRoleBinding). The error is the role lister's NotFound, as the authorizer reports it.
func (p Policy) roleRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	return p.lookupRules(ref, namespace, "role", "clusterrole")
}

// lookupRules is roleRules with the resource names a missing role's NotFound is worded
// with: the authorizer's listers say "role" and "clusterrole", the API server's registry
// the resource of the request it serves.
func (p Policy) lookupRules(ref rbacv1.RoleRef, namespace, role, clusterRole string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		if namespace != "" {
			for i := range p.Roles {
				if r := &p.Roles[i]; r.Namespace == namespace && r.Name == ref.Name {
					return r.Rules, nil
				}
			}
		}
		return nil, apierrors.NewNotFound(rbacv1.Resource(role), ref.Name)
	case "ClusterRole":
		for i := range p.ClusterRoles {
			if r := &p.ClusterRoles[i]; r.Name == ref.Name {
				return r.Rules, nil
			}
		}
		return nil, apierrors.NewNotFound(rbacv1.Resource(clusterRole), ref.Name)
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// appliesTo reports whether a binding's subjects include u. A ServiceAccount subject with no
// namespace means one of the binding's namespace (none for a ClusterRoleBinding).
func appliesTo(u User, subjects []rbacv1.Subject, namespace string) bool {
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if u.Name == s.Name {
				return true
			}
		case rbacv1.GroupKind:
			if slices.Contains(u.Groups, s.Name) {
				return true
			}
		case rbacv1.ServiceAccountKind:
			ns := namespace
			if s.Namespace != "" {
				ns = s.Namespace
			}
			if ns != "" && u.Name == ServiceAccountUsernamePrefix+ns+":"+s.Name {
				return true
			}
		}
	}
	return false
}

func anyAllows(rules []rbacv1.PolicyRule, req Request) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool { return Allows(r, req) })
}

// Allows reports whether one rule allows a resource request (k8s.io/component-helpers
// auth/rbac: VerbMatches, APIGroupMatches, ResourceMatches, ResourceNameMatches).
func Allows(r rbacv1.PolicyRule, req Request) bool {
	return matches(r.Verbs, req.Verb) && matches(r.APIGroups, req.Group) &&
		resourceMatches(r.Resources, req.Resource, req.Subresource) &&
		(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, req.Name))
}

func matches(list []string, v string) bool {
	return slices.Contains(list, rbacv1.VerbAll) || slices.Contains(list, v)
}

func resourceMatches(resources []string, resource, subresource string) bool {
	combined := resource
	if subresource != "" {
		combined += "/" + subresource
	}
	for _, r := range resources {
		if r == rbacv1.ResourceAll || r == combined || (subresource != "" && r == "*/"+subresource) {
			return true
		}
	}
	return false
}
