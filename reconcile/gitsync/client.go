package gitsync

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// clientFor is the client a Sync applies, prunes and reads its objects with: olmsync's
// own, or one impersonating spec.serviceAccountName, so that the Sync can do no more
// than the account may. A missing account makes the Sync wait (ApplyFailed,
// ServiceAccountNotFound): the API server would let olmsync impersonate a name nobody
// holds, and every request would be refused for a reason that says less.
func (r *Reconciler) clientFor(ctx context.Context, obj *olmsyncv1alpha1.Sync) (client.Client, error) {
	name := obj.Spec.ServiceAccountName
	if name == "" {
		return r.Client, nil
	}
	sa := types.NamespacedName{Namespace: obj.Namespace, Name: name}
	if err := r.APIReader.Get(ctx, sa, &corev1.ServiceAccount{}); err != nil {
		if apierrors.IsNotFound(err) {
			conditions.MarkTrue(obj, olmsyncv1alpha1.ApplyFailedCondition, olmsyncv1alpha1.ServiceAccountNotFoundReason,
				"ServiceAccount %s of spec.serviceAccountName not found", sa)
			return nil, waiting("ServiceAccount %s not found", sa)
		}
		return nil, fmt.Errorf("read ServiceAccount %s: %w", sa, err)
	}
	cfg := rest.CopyConfig(r.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", sa.Namespace, sa.Name)}
	// The manager's mapper: no discovery per reconcile.
	return client.New(cfg, client.Options{Scheme: r.Client.Scheme(), Mapper: r.Client.RESTMapper()})
}
