package csv

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/olm/phase"
)

// facts gathers what the phase machine needs for the CSV's phase: its requirements only where
// they are checked (Pending, Succeeded, Failed), its deployments' health only where it is
// judged (Installing, Succeeded, Failed).
func (r *Reconciler) facts(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) (phase.Facts, error) {
	f := phase.Facts{
		Now:               time.Now(),
		Groups:            s.evaluation,
		Strategy:          s.strategy,
		Replaces:          s.replacement.Replaces,
		ReplacedBy:        s.replacement.ReplacedBy,
		NewestReplacement: s.replacement.Newest,
		OwnerConflict:     len(phase.OwnerConflicts(obj, s.csvs)) > 0,
	}
	if s.evaluation.Transition != nil || s.evaluation.Skipped != "" {
		return f, nil
	}
	p := obj.Status.Phase
	if p == v1alpha1.CSVPhasePending && f.Replaces != nil {
		notUpgradeable, err := r.upgradeable(ctx, f.Replaces)
		if err != nil {
			return f, err
		}
		f.ReplacesNotUpgradeable = notUpgradeable
	}
	if p == v1alpha1.CSVPhasePending || p == v1alpha1.CSVPhaseSucceeded || p == v1alpha1.CSVPhaseFailed {
		snap, err := r.snapshot(ctx, obj, s)
		if err != nil {
			return f, err
		}
		f.Requirements = phase.CheckRequirements(obj, snap)
	}
	if p == v1alpha1.CSVPhasePending && len(obj.Spec.APIServiceDefinitions.Owned) > 0 {
		conflict, err := r.apiServiceConflict(ctx, obj)
		if err != nil {
			return f, err
		}
		f.APIServiceOwnerConflict = conflict
	}
	if p == v1alpha1.CSVPhaseInstalling || p == v1alpha1.CSVPhaseSucceeded || p == v1alpha1.CSVPhaseFailed {
		var caHashes map[string]string
		if install.HasCertResources(obj) {
			var err error
			if caHashes, err = r.certFacts(ctx, obj, &f, s); err != nil {
				return f, err
			}
		}
		deployments, err := r.applier().OwnedDeployments(ctx, obj)
		if err != nil {
			return f, err
		}
		f.Installed = install.Check(obj, deployments, caHashes)
	}
	return f, nil
}

// upgradeable reads the OperatorCondition named as the replaced CSV and says whether its
// operator may be replaced (phase.Upgradeable): nil when it may, the reason when not. A
// missing OperatorCondition, or a cluster that does not serve the kind, holds nothing back.
func (r *Reconciler) upgradeable(ctx context.Context, replaced *v1alpha1.ClusterServiceVersion) (error, error) {
	cond := &operatorsv2.OperatorCondition{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: replaced.Namespace, Name: replaced.Name}, cond)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get operatorcondition %s/%s: %w", replaced.Namespace, replaced.Name, err)
	}
	return phase.Upgradeable(cond), nil
}

// snapshot reads what the requirement check needs. The permission objects this sync wrote are
// laid over what the cache holds, which may not show them yet.
func (r *Reconciler) snapshot(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, s *state) (phase.Snapshot, error) {
	snap := phase.Snapshot{
		CSVs:            s.csvs,
		CRDs:            map[string]*apiextensionsv1.CustomResourceDefinition{},
		ServiceAccounts: map[string]*corev1.ServiceAccount{},
	}
	if obj.Spec.MinKubeVersion != "" {
		snap.ServerVersion = r.serverVersion(ctx)
	}
	if err := r.readCRDs(ctx, obj, &snap); err != nil {
		return snap, err
	}
	if err := r.readServiceAccounts(ctx, obj, &snap); err != nil {
		return snap, err
	}
	if err := r.readOwnedRBAC(ctx, obj, &snap); err != nil {
		return snap, err
	}
	overlayApplied(&snap, s.applied)
	if err := r.readAPIs(ctx, obj, &snap); err != nil {
		return snap, err
	}
	return snap, nil
}

func (r *Reconciler) readCRDs(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, snap *phase.Snapshot) error {
	descs := slices.Concat(obj.Spec.CustomResourceDefinitions.Owned, obj.Spec.CustomResourceDefinitions.Required)
	for _, d := range descs {
		if _, done := snap.CRDs[d.Name]; done {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := r.Client.Get(ctx, client.ObjectKey{Name: d.Name}, crd)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("get crd %s: %w", d.Name, err)
		}
		snap.CRDs[d.Name] = crd
	}
	return nil
}

func (r *Reconciler) readServiceAccounts(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, snap *phase.Snapshot) error {
	for _, name := range install.ServiceAccountNames(obj) {
		sa := &corev1.ServiceAccount{}
		err := r.Options.Written.Get(ctx, r.Client, client.ObjectKey{Namespace: obj.Namespace, Name: name}, sa)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("get serviceaccount %s/%s: %w", obj.Namespace, name, err)
		}
		snap.ServiceAccounts[name] = sa
	}
	return nil
}

// readOwnedRBAC reads the Roles and RoleBindings of the CSV's namespace and the ClusterRoles and
// ClusterRoleBindings that carry the CSV's owner labels.
func (r *Reconciler) readOwnedRBAC(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, snap *phase.Snapshot) error {
	owner := client.MatchingLabels(install.OwnerSelector(obj))
	ns := client.InNamespace(obj.Namespace)
	cluster := []client.ListOption{owner}
	if r.indexed {
		cluster = append(cluster, client.MatchingFields{indexOwner: groups.OwnerKey(v1alpha1.ClusterServiceVersionKind, obj.Namespace, obj.Name)})
	}
	var roles rbacv1.RoleList
	var bindings rbacv1.RoleBindingList
	var clusterRoles rbacv1.ClusterRoleList
	var clusterBindings rbacv1.ClusterRoleBindingList
	for _, l := range []struct {
		list client.ObjectList
		opts []client.ListOption
	}{
		{&roles, []client.ListOption{ns, owner}},
		{&bindings, []client.ListOption{ns, owner}},
		{&clusterRoles, cluster},
		{&clusterBindings, cluster},
	} {
		if err := r.Client.List(ctx, l.list, l.opts...); err != nil {
			return fmt.Errorf("list rbac of csv: %w", err)
		}
	}
	snap.Roles, snap.RoleBindings = roles.Items, bindings.Items
	snap.ClusterRoles, snap.ClusterRoleBindings = clusterRoles.Items, clusterBindings.Items
	return nil
}

// overlayApplied lays the permission objects written in this sync over the snapshot.
func overlayApplied(snap *phase.Snapshot, applied *install.Permissions) {
	if applied == nil {
		return
	}
	for i := range applied.ServiceAccounts {
		sa := &applied.ServiceAccounts[i]
		if _, ok := snap.ServiceAccounts[sa.Name]; !ok {
			snap.ServiceAccounts[sa.Name] = sa
		}
	}
	snap.Roles = overlay(snap.Roles, applied.Roles, func(o *rbacv1.Role) string { return o.Name })
	snap.RoleBindings = overlay(snap.RoleBindings, applied.RoleBindings, func(o *rbacv1.RoleBinding) string { return o.Name })
	snap.ClusterRoles = overlay(snap.ClusterRoles, applied.ClusterRoles, func(o *rbacv1.ClusterRole) string { return o.Name })
	snap.ClusterRoleBindings = overlay(snap.ClusterRoleBindings, applied.ClusterRoleBindings, func(o *rbacv1.ClusterRoleBinding) string { return o.Name })
}

// overlay returns have with every object of written added that have lacks (by name).
func overlay[T any](have, written []T, name func(*T) string) []T {
	names := map[string]bool{}
	for i := range have {
		names[name(&have[i])] = true
	}
	out := slices.Clone(have)
	for i := range written {
		if !names[name(&written[i])] {
			out = append(out, written[i])
		}
	}
	return out
}

// apiServiceGVK is the kind of aggregated API registrations, read unstructured so that olmsync
// does not need kube-aggregator's types for this one check.
var apiServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// readAPIs asks discovery about the native APIs and required APIServices the CSV names, and
// reads those APIServices' Available condition.
func (r *Reconciler) readAPIs(ctx context.Context, obj *v1alpha1.ClusterServiceVersion, snap *phase.Snapshot) error {
	required := obj.Spec.APIServiceDefinitions.Required
	if len(obj.Spec.NativeAPIs) == 0 && len(required) == 0 {
		return nil
	}
	gvks := slices.Clone(obj.Spec.NativeAPIs)
	for _, d := range required {
		gvks = append(gvks, metav1.GroupVersionKind{Group: d.Group, Version: d.Version, Kind: d.Kind})
	}
	snap.Served = r.served(gvks)
	snap.APIServices = map[string]bool{}
	for _, d := range required {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiServiceGVK)
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: d.APIServiceName()}, u)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("get apiservice %s: %w", d.APIServiceName(), err)
		}
		snap.APIServices[d.APIServiceName()] = apiServiceAvailable(u)
	}
	return nil
}

func apiServiceAvailable(u *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Available" {
			return m["status"] == "True"
		}
	}
	return false
}
