package subscription

import (
	"cmp"
	"slices"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// MaxInstallPlans is how many InstallPlans OLM keeps in a namespace (gcInstallPlans).
const MaxInstallPlans = 5

// PlansToDelete chooses the InstallPlans of a namespace to delete so that at most keep are
// left, as OLM's gcInstallPlans does: oldest generation first (ties by creation time, then
// name), the highest generation always kept. olmsync also keeps every plan a Subscription
// still references: with one plan per Subscription, a namespace of many Subscriptions has
// more than five live plans, and deleting a referenced one would make its Subscription
// resolve again.
func PlansToDelete(plans []v1alpha1.InstallPlan, subs []v1alpha1.Subscription, keep int) []string {
	if len(plans) <= keep {
		return nil
	}
	referenced := map[string]bool{}
	for i := range subs {
		if ref := subs[i].Status.InstallPlanRef; ref != nil {
			referenced[ref.Name] = true
		}
	}
	sorted := slices.Clone(plans)
	slices.SortFunc(sorted, func(a, b v1alpha1.InstallPlan) int {
		return cmp.Or(
			cmp.Compare(a.Spec.Generation, b.Spec.Generation),
			a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
			cmp.Compare(a.Name, b.Name),
		)
	})
	excess := len(sorted) - keep
	var out []string
	for _, ip := range sorted[:len(sorted)-1] { // the newest stays
		if excess == 0 {
			break
		}
		if referenced[ip.Name] {
			continue
		}
		out = append(out, ip.Name)
		excess--
	}
	return out
}
