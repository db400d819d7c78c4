package gitsync

import (
	"context"
	"errors"
	"fmt"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// clientFor is the client a Sync applies, prunes and reads its objects with (ClientFor). A
// missing account makes the Sync wait (ApplyFailed, ServiceAccountNotFound): the API
// server would let olmsync impersonate a name nobody holds, and every request would be
// refused for a reason that says less.
func (r *Reconciler) clientFor(ctx context.Context, obj *olmsyncv1alpha1.Sync) (client.Client, error) {
	c, err := ClientFor(ctx, r.Config, r.Client, r.APIReader, obj)
	if err != nil {
		return nil, r.clientError(obj, err)
	}
	return c, nil
}

// clientError turns a failure to make the Sync's client into its condition: a missing
// service account or an unusable kubeconfig waits (either can appear without the Sync
// changing); anything else is returned as it is.
func (r *Reconciler) clientError(obj *olmsyncv1alpha1.Sync, err error) error {
	var (
		missing *ServiceAccountNotFoundError
		kc      *KubeConfigError
	)
	switch {
	case errors.As(err, &missing):
		conditions.MarkTrue(obj, olmsyncv1alpha1.ApplyFailedCondition, olmsyncv1alpha1.ServiceAccountNotFoundReason, "%s", missing)
		return waiting("ServiceAccount %s not found", missing.ServiceAccount)
	case errors.As(err, &kc):
		conditions.MarkTrue(obj, olmsyncv1alpha1.ApplyFailedCondition, olmsyncv1alpha1.KubeConfigInvalidReason, "%s; nothing was applied or pruned", kc)
		return waiting("%s", kc)
	}
	return err
}

// ServiceAccountNotFoundError says that spec.serviceAccountName names no ServiceAccount.
type ServiceAccountNotFoundError struct {
	ServiceAccount types.NamespacedName
}

func (e *ServiceAccountNotFoundError) Error() string {
	return fmt.Sprintf("ServiceAccount %s of spec.serviceAccountName not found", e.ServiceAccount)
}

// ClientFor is the client a Sync applies, prunes and reads its objects with, for the
// reconciler and for `olmsync diff sync`: a client of the cluster of spec.kubeConfig when
// it names one (remote.go), else c itself, or, when the Sync names
// spec.serviceAccountName, a client of cfg impersonating that account (with c's scheme
// and mapper), so that the Sync can do no more than the account may. The account is looked
// for through reader first; a missing one is a *ServiceAccountNotFoundError.
func ClientFor(ctx context.Context, cfg *rest.Config, c client.Client, reader client.Reader, obj *olmsyncv1alpha1.Sync) (client.Client, error) {
	if obj.Spec.KubeConfig != nil {
		// Another cluster: its kubeconfig connects, and the service account, if any, is
		// impersonated there (where it lives), not looked for here.
		return remoteClient(ctx, c, reader, obj)
	}
	return impersonating(ctx, cfg, c, reader, obj)
}

// VariablesReader reads what a Sync names in its own namespace (postBuild.substituteFrom):
// on olmsync's cluster always, as the Sync's service account when it names one there.
// With spec.kubeConfig the service account lives on the other cluster, and the Sync's
// namespace here is read with olmsync's identity, as Flux reads a remote Kustomization's
// variables.
func VariablesReader(ctx context.Context, cfg *rest.Config, c client.Client, reader client.Reader, obj *olmsyncv1alpha1.Sync) (client.Reader, error) {
	if obj.Spec.KubeConfig != nil || obj.Spec.ServiceAccountName == "" {
		return reader, nil
	}
	return impersonating(ctx, cfg, c, reader, obj)
}

// impersonating is c, or a client of cfg impersonating spec.serviceAccountName.
func impersonating(ctx context.Context, cfg *rest.Config, c client.Client, reader client.Reader, obj *olmsyncv1alpha1.Sync) (client.Client, error) {
	name := obj.Spec.ServiceAccountName
	if name == "" {
		return c, nil
	}
	sa := types.NamespacedName{Namespace: obj.Namespace, Name: name}
	if err := reader.Get(ctx, sa, &corev1.ServiceAccount{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &ServiceAccountNotFoundError{ServiceAccount: sa}
		}
		return nil, fmt.Errorf("read ServiceAccount %s: %w", sa, err)
	}
	impersonating := rest.CopyConfig(cfg)
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", sa.Namespace, sa.Name)}
	// c's mapper: no discovery per reconcile.
	return client.New(impersonating, client.Options{Scheme: c.Scheme(), Mapper: c.RESTMapper()})
}
