package csv

import (
	"context"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
)

// ensureGroupRBAC writes the RBAC the CSV's group generates for it (seed 000, "Role-based access
// control"): the per-API ClusterRoles aggregating into the group's and Kubernetes' admin, edit
// and view roles, and the additional RBAC — its permissions lifted to ClusterRoles in a global
// group, or its Roles and RoleBindings copied into the other target namespaces (owned there by
// the copy of the CSV). A CSV that a newer one replaces leaves the shared, same-named roles to
// the newer one.
func (r *Reconciler) ensureGroupRBAC(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) error {
	og := s.evaluation.Membership.Group
	if og == nil || s.evaluation.Transition != nil || s.replacement.ReplacedBy != nil {
		return nil
	}
	switch obj.Status.Phase {
	case v1alpha1.CSVPhaseNone, v1alpha1.CSVPhaseReplacing, v1alpha1.CSVPhaseDeleting:
		return nil
	}
	a := r.applier()
	perAPI, err := groups.ProvidedAPIClusterRoles(obj, og)
	if err != nil {
		return &terminalError{err: err}
	}
	for i := range perAPI {
		if err := a.ApplyClusterRole(ctx, &perAPI[i]); err != nil {
			return err
		}
	}
	roles, bindings, err := r.operatorRoles(ctx, obj, s)
	if err != nil {
		return err
	}
	extra := groups.AdditionalRBAC(obj, og, roles, bindings)
	for i := range extra.ClusterRoles {
		if err := a.ApplyClusterRole(ctx, &extra.ClusterRoles[i]); err != nil {
			return err
		}
	}
	for i := range extra.ClusterRoleBindings {
		if err := a.ApplyClusterRoleBinding(ctx, &extra.ClusterRoleBindings[i]); err != nil {
			return err
		}
	}
	return r.applyTenantRBAC(ctx, extra, s)
}

// operatorRoles returns the Roles and RoleBindings of the CSV's namespace that carry its owner
// labels, with those written in this sync that the cache may not show yet.
func (r *Reconciler) operatorRoles(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) ([]rbacv1.Role, []rbacv1.RoleBinding, error) {
	owner := client.MatchingLabels(install.OwnerSelector(obj))
	var roles rbacv1.RoleList
	if err := r.Client.List(ctx, &roles, client.InNamespace(obj.Namespace), owner); err != nil {
		return nil, nil, err
	}
	var bindings rbacv1.RoleBindingList
	if err := r.Client.List(ctx, &bindings, client.InNamespace(obj.Namespace), owner); err != nil {
		return nil, nil, err
	}
	if s.applied == nil {
		return roles.Items, bindings.Items, nil
	}
	return overlay(roles.Items, s.applied.Roles, func(o *rbacv1.Role) string { return o.Name }),
		overlay(bindings.Items, s.applied.RoleBindings, func(o *rbacv1.RoleBinding) string { return o.Name }), nil
}

// applyTenantRBAC writes the Roles and RoleBindings copied into target namespaces, owned by the
// CSV's copy there. Namespaces that do not exist (a group may name them) are skipped.
func (r *Reconciler) applyTenantRBAC(ctx context.Context, extra groups.RBAC, s *state) error {
	if len(extra.Roles) == 0 && len(extra.RoleBindings) == 0 {
		return nil // nothing to copy: no need for the cluster's namespaces
	}
	a := r.applier()
	namespaces, err := r.liveNamespaces(ctx)
	if err != nil {
		return err
	}
	live := func(ns string) bool { return slices.Contains(namespaces, ns) }
	for i := range extra.Roles {
		role := &extra.Roles[i]
		if !live(role.Namespace) {
			continue
		}
		if c := s.copies[role.Namespace]; c != nil {
			role.OwnerReferences = append(role.OwnerReferences, install.OwnerReference(c))
		}
		if err := a.ApplyRole(ctx, role); err != nil {
			return err
		}
	}
	for i := range extra.RoleBindings {
		binding := &extra.RoleBindings[i]
		if !live(binding.Namespace) {
			continue
		}
		if c := s.copies[binding.Namespace]; c != nil {
			binding.OwnerReferences = append(binding.OwnerReferences, install.OwnerReference(c))
		}
		if err := a.ApplyRoleBinding(ctx, binding); err != nil {
			return err
		}
	}
	return nil
}
