package installplan

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/resolve"
)

// New is the InstallPlan OLM creates for a resolution's plan in namespace, owned by the
// Subscriptions it resolves (non-controller owner references, as OLM sets them), named
// install-<random> by the API server. generation is OLM's spec.generation: one more than the
// highest of the namespace's plans. Create it with Create, which also writes its status.
func New(namespace string, generation int, plan *resolve.Plan, owners []*v1alpha1.Subscription) *v1alpha1.InstallPlan {
	ip := &v1alpha1.InstallPlan{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.InstallPlanKind},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "install-",
			Namespace:    namespace,
		},
		Spec: v1alpha1.InstallPlanSpec{
			ClusterServiceVersionNames: plan.CSVNames,
			Approval:                   plan.Approval,
			Approved:                   plan.Approval == v1alpha1.ApprovalAutomatic,
			Generation:                 generation,
		},
		Status: v1alpha1.InstallPlanStatus{
			Phase:          v1alpha1.InstallPlanPhaseNone,
			CatalogSources: plan.CatalogSources,
			Plan:           plan.Steps,
			BundleLookups:  plan.BundleLookups,
		},
	}
	for _, s := range owners {
		ip.OwnerReferences = append(ip.OwnerReferences, metav1.OwnerReference{
			APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.SubscriptionKind,
			Name: s.Name, UID: s.UID, BlockOwnerDeletion: new(false), Controller: new(false),
		})
	}
	return ip
}

// Create creates ip and then writes its status (the API server ignores status on create), so
// that the controller finds the steps already planned.
func Create(ctx context.Context, c client.Client, ip *v1alpha1.InstallPlan) error {
	status := ip.Status.DeepCopy()
	if err := c.Create(ctx, ip); err != nil {
		return fmt.Errorf("create installplan in %s: %w", ip.Namespace, err)
	}
	// Once created, the plan exists whatever happens next: the status write is retried on
	// conflict rather than reported as a failed create (the caller would make another plan).
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ip.Status = *status
		err := c.Status().Update(ctx, ip)
		if apierrors.IsConflict(err) {
			if gerr := c.Get(ctx, client.ObjectKeyFromObject(ip), ip); gerr != nil {
				return gerr
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("write status of installplan %s/%s: %w", ip.Namespace, ip.Name, err)
	}
	return nil
}
