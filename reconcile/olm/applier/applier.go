package applier

import (
	"context"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/reconcile/olm/written"
)

// Applier writes what a CSV's install strategy makes. Every write is a create-or-update that
// changes only what olmsync owns on the object (labels it sets, owner references, rules,
// specs) and skips the update when nothing changed, so a steady cluster sees no writes.
type Applier struct {
	// Client writes, and reads through the manager's cache.
	Client client.Client
	// APIReader reads what the cache may not hold: an object that exists but was not created
	// by olmsync (outside a label-filtered cache). Required.
	APIReader client.Reader
	// Written are the objects the manager's controllers wrote that the cache may not show
	// yet (the manager's, shared by its controllers): what apply writes is remembered there,
	// and a cached object is read through it, so that an object just created — here or by an
	// InstallPlan's step — is not created again, nor updated from the version a write
	// replaced. Nil remembers nothing.
	Written *written.Objects
}

// EnsurePermissions creates or updates the service accounts and RBAC of p. A service account
// that exists already gets the CSV as one more owner, unless another CSV owns it that shared
// does not accept (shared gets the owner's name; pass the CSVs this one replaces): then it is
// left alone, and the requirement check reports it as owned by another CSV, as OLM does.
func (a *Applier) EnsurePermissions(ctx context.Context, csv *v1alpha1.ClusterServiceVersion, p install.Permissions, shared func(owner string) bool) error {
	for i := range p.ServiceAccounts {
		desired := &p.ServiceAccounts[i]
		err := apply(ctx, a, desired, func() *corev1.ServiceAccount { return &corev1.ServiceAccount{} },
			func(existing, _ *corev1.ServiceAccount) {
				if ownedByOtherCSV(existing.OwnerReferences, csv, shared) {
					return
				}
				existing.OwnerReferences = install.AddOwner(existing.OwnerReferences, csv)
			})
		if err != nil {
			return err
		}
	}
	for i := range p.Roles {
		if err := a.ApplyRole(ctx, &p.Roles[i]); err != nil {
			return err
		}
	}
	for i := range p.RoleBindings {
		if err := a.ApplyRoleBinding(ctx, &p.RoleBindings[i]); err != nil {
			return err
		}
	}
	for i := range p.ClusterRoles {
		if err := a.ApplyClusterRole(ctx, &p.ClusterRoles[i]); err != nil {
			return err
		}
	}
	for i := range p.ClusterRoleBindings {
		if err := a.ApplyClusterRoleBinding(ctx, &p.ClusterRoleBindings[i]); err != nil {
			return err
		}
	}
	return nil
}

// ownedByOtherCSV reports whether refs name a CSV other than csv that shared does not accept.
func ownedByOtherCSV(refs []metav1.OwnerReference, csv *v1alpha1.ClusterServiceVersion, shared func(string) bool) bool {
	for _, r := range refs {
		if r.Kind != v1alpha1.ClusterServiceVersionKind || !install.IsOperatorsGroup(r.APIVersion) || r.UID == csv.UID {
			continue
		}
		if shared == nil || !shared(r.Name) {
			return true
		}
	}
	return false
}

// ApplyRole creates or updates a Role: its labels (added to the existing ones), rules and owner
// references (a CSV owner replaces any other CSV owner).
func (a *Applier) ApplyRole(ctx context.Context, desired *rbacv1.Role) error {
	return apply(ctx, a, desired, func() *rbacv1.Role { return &rbacv1.Role{} }, func(existing, desired *rbacv1.Role) {
		existing.Labels = mergeLabels(existing.Labels, desired.Labels)
		existing.OwnerReferences = install.MergeOwners(existing.OwnerReferences, desired.OwnerReferences)
		existing.Rules = desired.Rules
	})
}

// ApplyRoleBinding creates or updates a RoleBinding. The role reference cannot change on an
// existing binding; generated names include a hash of it, so it never has to.
func (a *Applier) ApplyRoleBinding(ctx context.Context, desired *rbacv1.RoleBinding) error {
	return apply(ctx, a, desired, func() *rbacv1.RoleBinding { return &rbacv1.RoleBinding{} }, func(existing, desired *rbacv1.RoleBinding) {
		existing.Labels = mergeLabels(existing.Labels, desired.Labels)
		existing.OwnerReferences = install.MergeOwners(existing.OwnerReferences, desired.OwnerReferences)
		existing.Subjects = desired.Subjects
	})
}

// ApplyClusterRole creates or updates a ClusterRole: labels, rules and aggregation rule. The
// rules of an aggregated role belong to Kubernetes' aggregation controller and are kept.
func (a *Applier) ApplyClusterRole(ctx context.Context, desired *rbacv1.ClusterRole) error {
	return apply(ctx, a, desired, func() *rbacv1.ClusterRole { return &rbacv1.ClusterRole{} }, func(existing, desired *rbacv1.ClusterRole) {
		existing.Labels = mergeLabels(existing.Labels, desired.Labels)
		existing.AggregationRule = desired.AggregationRule
		if desired.AggregationRule == nil {
			existing.Rules = desired.Rules
		}
	})
}

// ApplyClusterRoleBinding creates or updates a ClusterRoleBinding: labels and subjects.
func (a *Applier) ApplyClusterRoleBinding(ctx context.Context, desired *rbacv1.ClusterRoleBinding) error {
	return apply(ctx, a, desired, func() *rbacv1.ClusterRoleBinding { return &rbacv1.ClusterRoleBinding{} }, func(existing, desired *rbacv1.ClusterRoleBinding) {
		existing.Labels = mergeLabels(existing.Labels, desired.Labels)
		existing.Subjects = desired.Subjects
	})
}

// InstallDeployments creates or updates the install.Deployments of the CSV's strategy, then deletes
// the install.Deployments the CSV owns that its strategy no longer lists, and those of previous (the
// CSV it replaces, may be nil) that it does not list either. A Deployment is rewritten only
// when its spec hash, pod-template annotations, labels or owners differ from the CSV's.
// caHashes are the olmcahash of each serving deployment's CA (InstallCertResources).
// The API server refusing a write for lack of rights is an unrecoverable *install.StrategyError.
func (a *Applier) InstallDeployments(ctx context.Context, csv, previous *v1alpha1.ClusterServiceVersion, caHashes map[string]string) error {
	desired, err := install.Deployments(csv, caHashes)
	if err != nil {
		return err
	}
	for i := range desired {
		if err := a.applyDeployment(ctx, &desired[i]); err != nil {
			if apierrors.IsForbidden(err) {
				return &install.StrategyError{Reason: install.ReasonInsufficientPermissions, Message: err.Error()}
			}
			return err
		}
	}
	return a.deleteStaleDeployments(ctx, csv, previous)
}

func (a *Applier) applyDeployment(ctx context.Context, desired *appsv1.Deployment) error {
	return apply(ctx, a, desired, func() *appsv1.Deployment { return &appsv1.Deployment{} }, func(existing, desired *appsv1.Deployment) {
		// The API server defaults a spec, so a written spec never equals the CSV's: the spec
		// hash label and the projected annotations say whether it is current (as in OLM).
		stale := existing.Labels[install.DeploymentSpecHashLabel] != desired.Labels[install.DeploymentSpecHashLabel] ||
			!annotationsCurrent(existing, desired)
		existing.Labels = mergeLabels(existing.Labels, desired.Labels)
		existing.OwnerReferences = install.MergeOwners(existing.OwnerReferences, desired.OwnerReferences)
		if stale {
			existing.Spec = desired.Spec
		}
	})
}

// annotationsCurrent reports whether existing's pod template carries every annotation of desired's.
func annotationsCurrent(existing, desired *appsv1.Deployment) bool {
	for k, v := range desired.Spec.Template.Annotations {
		if got, ok := existing.Spec.Template.Annotations[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// deleteStaleDeployments removes the install.Deployments owned by csv that its strategy does not list,
// and previous's that it does not list either.
func (a *Applier) deleteStaleDeployments(ctx context.Context, csv, previous *v1alpha1.ClusterServiceVersion) error {
	keep := map[string]bool{}
	for _, s := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		keep[s.Name] = true
	}
	owned, err := a.OwnedDeployments(ctx, csv)
	if err != nil {
		return err
	}
	var stale []string
	for _, d := range owned {
		if !keep[d.Name] && install.HasOwnerUID(d.OwnerReferences, csv) {
			stale = append(stale, d.Name)
		}
	}
	if previous != nil {
		for _, s := range previous.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
			if !keep[s.Name] {
				stale = append(stale, s.Name)
			}
		}
	}
	return a.deleteDeployments(ctx, csv.Namespace, stale)
}

// DeleteDeployments deletes the install.Deployments of the CSV's strategy, as OLM does when the CSV
// fails with an OperatorGroup API conflict.
func (a *Applier) DeleteDeployments(ctx context.Context, csv *v1alpha1.ClusterServiceVersion) error {
	var names []string
	for _, s := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		names = append(names, s.Name)
	}
	return a.deleteDeployments(ctx, csv.Namespace, names)
}

func (a *Applier) deleteDeployments(ctx context.Context, namespace string, names []string) error {
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		d := &appsv1.Deployment{}
		d.Namespace, d.Name = namespace, name
		if err := a.Client.Delete(ctx, d); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete deployment %s/%s: %w", namespace, name, err)
		}
	}
	return nil
}

// OwnedDeployments lists the install.Deployments in the CSV's namespace that carry its owner labels.
func (a *Applier) OwnedDeployments(ctx context.Context, csv *v1alpha1.ClusterServiceVersion) ([]appsv1.Deployment, error) {
	var list appsv1.DeploymentList
	if err := a.Client.List(ctx, &list, client.InNamespace(csv.Namespace), client.MatchingLabels(install.OwnerSelector(csv))); err != nil {
		return nil, fmt.Errorf("list deployments of csv %s/%s: %w", csv.Namespace, csv.Name, err)
	}
	return list.Items, nil
}

// apply creates desired, or merges it into the existing object and updates that when the merge
// changed anything. newObj returns an empty object of desired's type to read into. The
// existing object is read from the cache through Written: one this process created or
// updated moments ago is taken as written, not as missing or at an older version. An update
// the API server refuses as a conflict — the copy read was older than the object: a write
// the cache and Written do not show, or Kubernetes' aggregation controller filling an
// aggregated ClusterRole's rules — is merged into the API server's copy and written once
// more, instead of failing the reconcile for a retry (TestApplyAfterAStaleRead).
func apply[T client.Object](ctx context.Context, a *Applier, desired T, newObj func() T, merge func(existing, desired T)) error {
	key := client.ObjectKeyFromObject(desired)
	kind := desired.GetObjectKind().GroupVersionKind().Kind
	existing := newObj()
	if created, err := getOrCreate(ctx, a, kind, desired, existing); created || err != nil {
		return err
	}
	err := mergeAndRemember(ctx, a, existing, desired, merge)
	if apierrors.IsNotFound(err) {
		// Deleted since the copy read was written, the cache not showing it yet: create it.
		a.Written.Forget(existing)
		created := desired.DeepCopyObject().(T)
		ran, err := a.Written.Create(ctx, created, func() error { return a.Client.Create(ctx, created) })
		if !ran && err == nil {
			// Another writer of this process created it at this moment: this create is
			// refused (AlreadyExists) and the reconcile retried, which merges desired in.
			err = a.Client.Create(ctx, created)
		}
		if err != nil {
			return fmt.Errorf("create %s %s: %w", kind, key, err)
		}
		return nil
	}
	if apierrors.IsConflict(err) {
		a.Written.Forget(existing)
		fresh := newObj()
		if err := a.APIReader.Get(ctx, key, fresh); err != nil {
			return fmt.Errorf("get %s %s: %w", kind, key, err)
		}
		err = mergeAndRemember(ctx, a, fresh, desired, merge)
	}
	if err != nil {
		return fmt.Errorf("update %s %s: %w", kind, key, err)
	}
	return nil
}

// getOrCreate reads the object key names into existing (from the cache, through Written),
// or creates desired when there is none (created). A create another writer of this process
// is making at the same moment is waited for and read, not made again; one refused as
// AlreadyExists (an object out of the cache's sight, or not in it yet) reads the object from
// the API server, which is remembered as written when the cache will show it.
func getOrCreate[T client.Object](ctx context.Context, a *Applier, kind string, desired, existing T) (bool, error) {
	key := client.ObjectKeyFromObject(desired)
	for waited := false; ; waited = true {
		err := a.Written.Get(ctx, a.Client, key, existing)
		if !apierrors.IsNotFound(err) {
			if err != nil {
				return false, fmt.Errorf("get %s %s: %w", kind, key, err)
			}
			return false, nil
		}
		created := desired.DeepCopyObject().(T)
		ran, err := a.Written.Create(ctx, created, func() error { return a.Client.Create(ctx, created) })
		switch {
		case !ran && err == nil && !waited:
			continue // made by another writer of this process meanwhile: read it
		case !ran && err == nil:
			err = a.Client.Create(ctx, created)
		}
		if err == nil {
			return true, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return false, fmt.Errorf("create %s %s: %w", kind, key, err)
		}
		// It exists, out of the cache's sight or not in it yet: read it from the API server,
		// and remember the copy read, so that the next sync does not try the create again.
		if err := a.APIReader.Get(ctx, key, existing); err != nil {
			return false, fmt.Errorf("get %s %s: %w", kind, key, err)
		}
		a.Written.Wrote(existing, "")
		return false, nil
	}
}

// mergeAndRemember is mergeAndUpdate, remembering what it wrote in Written.
func mergeAndRemember[T client.Object](ctx context.Context, a *Applier, existing, desired T, merge func(existing, desired T)) error {
	replaced := existing.GetResourceVersion()
	err := mergeAndUpdate(ctx, a.Client, existing, desired, merge)
	if err == nil && existing.GetResourceVersion() != replaced {
		a.Written.Wrote(existing, replaced)
	}
	return err
}

// mergeAndUpdate merges desired into existing and updates it when that changed anything.
func mergeAndUpdate[T client.Object](ctx context.Context, c client.Client, existing, desired T, merge func(existing, desired T)) error {
	before := existing.DeepCopyObject()
	merge(existing, desired)
	if equality.Semantic.DeepEqual(before, existing) {
		return nil
	}
	return c.Update(ctx, existing)
}

// mergeLabels returns existing with desired's labels set on it.
func mergeLabels(existing, desired map[string]string) map[string]string {
	if len(desired) == 0 {
		return existing
	}
	out := maps.Clone(existing)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, desired)
	return out
}
