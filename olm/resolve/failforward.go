package resolve

import (
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// FailForwardEnabled reports whether resolution in a namespace fails forward, as OLM's
// IsFailForwardEnabled decides: the namespace holds exactly one OperatorGroup and its
// spec.upgradeStrategy is TechPreviewUnsafeFailForward (any other value is Default). The
// Subscription controller and `olmsync check` both pass the namespace's groups here.
func FailForwardEnabled(ogs ...*operatorsv1.OperatorGroup) bool {
	return len(ogs) == 1 && ogs[0] != nil &&
		ogs[0].EffectiveUpgradeStrategy() == operatorsv1.UpgradeStrategyUnsafeFailForward
}

// HiddenByFailForward reports whether, with fail-forward on, resolution leaves an installed
// CSV out of the namespace's installed set (OLM's csvSource with
// isReplacementChainThatEndsInFailure): the CSV is Replacing, every CSV after it in its
// replacement chain is Replacing too, and the chain ends in a Failed CSV. Such a CSV is
// referenced by no Subscription (its successor is the installed one), so leaving it in
// would make the upgrade away from the Failed CSV unsatisfiable.
//
// csvs are the namespace's CSVs; copies are ignored. Where OLM's walk meets a CSV before
// the end of the chain that is not Replacing, or a CSV twice, it fails the namespace's whole
// resolution with "csv <ns>/<name> in phase <phase> instead of Replacing" until the CSV
// controller has moved it on; olmsync keeps the CSV in view instead (docs/olm.md), which
// gives the outcome OLM reaches once the chain settles.
func HiddenByFailForward(csv *v1alpha1.ClusterServiceVersion, csvs []v1alpha1.ClusterServiceVersion) bool {
	if csv.Status.Phase != v1alpha1.CSVPhaseReplacing || groups.IsCopied(csv) {
		return false
	}
	// OLM's ReplacementMapping: the CSV that names each one in spec.replaces.
	replacedBy := map[string]*v1alpha1.ClusterServiceVersion{}
	for i := range csvs {
		if c := &csvs[i]; c.Spec.Replaces != "" && !groups.IsCopied(c) {
			replacedBy[c.Spec.Replaces] = c
		}
	}
	seen := map[string]bool{}
	for {
		next, ok := replacedBy[csv.Name]
		if !ok {
			return csv.Status.Phase == v1alpha1.CSVPhaseFailed
		}
		if csv.Status.Phase != v1alpha1.CSVPhaseReplacing || seen[csv.Name] {
			return false
		}
		seen[csv.Name] = true
		csv = next
	}
}
