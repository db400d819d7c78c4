package operatorcondition

import (
	"context"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
	"github.com/olmsync/olmsync/olm/phase"
	"github.com/olmsync/olmsync/reconcile/olm/written"
)

// ControllerName names the controller and its logger.
const ControllerName = "operatorcondition"

// Reconciler reconciles the OperatorCondition named by a request, and the CSV of that name.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// APIReader reads a Role or RoleBinding that exists but that the cache does not show:
	// created moments ago, or without OLM's olm.managed label, which the embedded OLM's cache
	// selects them by (olm.CacheByObject).
	APIReader client.Reader
	// Written are the objects the manager's controllers wrote that the cache may not show
	// yet: the Role and RoleBinding are read through it and remembered in it, so that a
	// reconcile right after the one that created them does not create them again. Nil
	// remembers nothing.
	Written *written.Objects
}

// Reconcile runs the steps in OLM's order: the OperatorCondition of the CSV, its Role, its
// RoleBinding, its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if err := r.generate(ctx, req); err != nil {
		return reconcile.Result{}, err
	}
	cond := &operatorsv2.OperatorCondition{}
	if err := r.Client.Get(ctx, req.NamespacedName, cond); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	steps := []struct {
		name string
		run  func(context.Context, *operatorsv2.OperatorCondition) error
	}{
		{"role", r.ensureRole},
		{"rolebinding", r.ensureRoleBinding},
		{"status", r.syncStatus},
	}
	for _, s := range steps {
		if err := s.run(ctx, cond); err != nil {
			return reconcile.Result{}, fmt.Errorf("operatorcondition %s %s: %w", req, s.name, err)
		}
	}
	return reconcile.Result{}, nil
}

// generate keeps the OperatorCondition of the CSV of the request's name, if there is one and
// it is not a copy: created, or its owners, deployments and service accounts put back as
// OLM's generator does. The rest of it — the operator's conditions, an administrator's
// overrides — is left as it is.
func (r *Reconciler) generate(ctx context.Context, req reconcile.Request) error {
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := r.Client.Get(ctx, req.NamespacedName, csv); err != nil {
		return client.IgnoreNotFound(err)
	}
	if groups.IsCopied(csv) || !csv.DeletionTimestamp.IsZero() {
		return nil
	}
	want := install.OperatorCondition(csv)
	have := &operatorsv2.OperatorCondition{}
	err := r.Client.Get(ctx, req.NamespacedName, have)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create operatorcondition %s: %w", req, err)
		}
		return nil
	case err != nil:
		return err
	}
	if equality.Semantic.DeepEqual(want.OwnerReferences, have.OwnerReferences) &&
		slices.Equal(want.Spec.Deployments, have.Spec.Deployments) &&
		slices.Equal(want.Spec.ServiceAccounts, have.Spec.ServiceAccounts) {
		return nil
	}
	have.OwnerReferences = want.OwnerReferences
	have.Spec.Deployments, have.Spec.ServiceAccounts = want.Spec.Deployments, want.Spec.ServiceAccounts
	if err := r.Client.Update(ctx, have); err != nil {
		return fmt.Errorf("update operatorcondition %s: %w", req, err)
	}
	return nil
}

func (r *Reconciler) ensureRole(ctx context.Context, cond *operatorsv2.OperatorCondition) error {
	want := install.OperatorConditionRole(cond)
	have := &rbacv1.Role{}
	return r.ensure(ctx, want, have, func() bool {
		if equality.Semantic.DeepEqual(want.OwnerReferences, have.OwnerReferences) &&
			equality.Semantic.DeepEqual(want.Rules, have.Rules) {
			return false
		}
		have.OwnerReferences, have.Rules = want.OwnerReferences, want.Rules
		return true
	})
}

func (r *Reconciler) ensureRoleBinding(ctx context.Context, cond *operatorsv2.OperatorCondition) error {
	want := install.OperatorConditionRoleBinding(cond)
	have := &rbacv1.RoleBinding{}
	return r.ensure(ctx, want, have, func() bool {
		if equality.Semantic.DeepEqual(want.OwnerReferences, have.OwnerReferences) &&
			want.RoleRef == have.RoleRef && equality.Semantic.DeepEqual(want.Subjects, have.Subjects) {
			return false
		}
		have.OwnerReferences, have.Subjects, have.RoleRef = want.OwnerReferences, want.Subjects, want.RoleRef
		return true
	})
}

// ensure creates want when the cache (through Written) does not show it, else reads it into
// have and, when update changed have, writes have back. A create refused because it exists
// out of the cache's sight reads it from the API server instead, as the CSV's applier does.
func (r *Reconciler) ensure(ctx context.Context, want, have client.Object, update func() bool) error {
	err := r.Written.Get(ctx, r.Client, client.ObjectKeyFromObject(want), have)
	if apierrors.IsNotFound(err) {
		var ran bool
		ran, err = r.Written.Create(ctx, want, func() error { return r.Client.Create(ctx, want) })
		if !ran && err == nil {
			// Another worker created it at this moment: read what it wrote.
			err = r.Written.Get(ctx, r.Client, client.ObjectKeyFromObject(want), have)
			if err != nil {
				return err
			}
			return r.update(ctx, have, update)
		}
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), have); err == nil {
			r.Written.Wrote(have, "")
		}
	}
	if err != nil {
		return err
	}
	return r.update(ctx, have, update)
}

// update writes have back when update changed it.
func (r *Reconciler) update(ctx context.Context, have client.Object, update func() bool) error {
	if !update() {
		return nil
	}
	// A binding's roleRef cannot change: as in OLM, the API server's refusal is the error.
	replaced := have.GetResourceVersion()
	err := r.Client.Update(ctx, have)
	switch {
	case err == nil:
		r.Written.Wrote(have, replaced)
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		r.Written.Forget(have) // the next event's reconcile reads it again
	}
	return err
}

// syncStatus copies spec.conditions to status (phase.SyncConditions) and writes it when it
// changed.
func (r *Reconciler) syncStatus(ctx context.Context, cond *operatorsv2.OperatorCondition) error {
	if !phase.SyncConditions(cond) {
		return nil
	}
	return r.Client.Status().Update(ctx, cond)
}
