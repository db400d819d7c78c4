package inventory

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Guard bounds how much one prune may delete (a Sync's spec.pruneOptions). A revision
// that renders none of what the Sync applied, or a force-push back to an old commit,
// turns into mass deletion through an ordinary prune; the guard refuses it unless the
// Sync says such a prune is meant.
type Guard struct {
	// AllowEmpty lets a prune delete every object of the inventory.
	AllowEmpty bool
	// MaxDeletions, when set, is the most objects one prune may delete: a count, or a
	// percentage of the inventory (rounded down).
	MaxDeletions *intstr.IntOrString
}

// PruneRefusedError says that the guard refused a prune. Nothing may be deleted then;
// Stale returns it beside the entries it would have deleted, so that the caller can
// count and name them.
type PruneRefusedError struct {
	// Stale is how many objects the prune would delete, of Total in the inventory.
	Stale, Total int
	// Everything: the prune would delete the whole inventory (AllowEmpty refused it);
	// otherwise it would delete more than Limit (MaxDeletions refused it).
	Everything bool
	Limit      int
	// Bound is MaxDeletions as written ("25", "30%").
	Bound string
}

func (e *PruneRefusedError) Error() string {
	if e.Everything {
		return fmt.Sprintf("prune refused: the revision would delete all %d objects of the Sync; "+
			"set spec.pruneOptions.allowEmpty to allow it", e.Total)
	}
	return fmt.Sprintf("prune refused: the revision would delete %d of %d objects, more than spec.pruneOptions.maxDeletions %s allows (%d)",
		e.Stale, e.Total, e.Bound, e.Limit)
}

// Check decides whether a prune of stale objects out of an inventory of total may run:
// nil, or a *PruneRefusedError. A malformed MaxDeletions (which the CRD refuses) refuses
// every deletion rather than none.
func (g Guard) Check(stale, total int) error {
	if stale == 0 {
		return nil
	}
	if stale >= total && !g.AllowEmpty {
		return &PruneRefusedError{Stale: stale, Total: total, Everything: true}
	}
	if g.MaxDeletions == nil {
		return nil
	}
	limit, err := intstr.GetScaledValueFromIntOrPercent(g.MaxDeletions, total, false)
	if err != nil || limit < 0 {
		limit = 0
	}
	if stale > limit {
		return &PruneRefusedError{Stale: stale, Total: total, Limit: limit, Bound: g.MaxDeletions.String()}
	}
	return nil
}
