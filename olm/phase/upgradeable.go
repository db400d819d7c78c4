package phase

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
)

// The messages of OLM's Upgradeable gating (OLM pkg/controller/operators/olm/
// operatorconditions.go and operator.go), verbatim.
const (
	messageNotUpgradeableFormat      = "the operator is not upgradeable: %s"
	messageConditionOutdatedFormat   = "the operatorcondition status %q=%q is outdated"
	messageReplacedNotUpgradeableFmt = "operator is not upgradeable: %s"
)

// NotUpgradeableError says why the operator of a CSV may not be replaced now: its
// OperatorCondition says Upgradeable=False (or an administrator's override does), or its
// Upgradeable status was written for an older generation of the OperatorCondition.
type NotUpgradeableError struct {
	// Message is OLM's error text.
	Message string
}

func (e *NotUpgradeableError) Error() string { return e.Message }

// Upgradeable is OLM's isOperatorUpgradeable over the OperatorCondition named as a CSV (nil
// when there is none, which is upgradeable): an override of type Upgradeable decides alone;
// otherwise status.conditions' Upgradeable, which must have been observed at the object's
// current generation, holds the upgrade back when False. It returns nil when the CSV may be
// replaced, else a *NotUpgradeableError with OLM's message.
func Upgradeable(cond *operatorsv2.OperatorCondition) error {
	if cond == nil {
		return nil
	}
	if o := meta.FindStatusCondition(cond.Spec.Overrides, operatorsv2.Upgradeable); o != nil {
		if o.Status == metav1.ConditionTrue {
			return nil
		}
		return &NotUpgradeableError{Message: fmt.Sprintf(messageNotUpgradeableFormat, o.Message)}
	}
	c := meta.FindStatusCondition(cond.Status.Conditions, operatorsv2.Upgradeable)
	switch {
	case c == nil:
		return nil
	case c.ObservedGeneration != cond.Generation:
		return &NotUpgradeableError{Message: fmt.Sprintf(messageConditionOutdatedFormat, c.Type, c.Status)}
	case c.Status == metav1.ConditionFalse:
		return &NotUpgradeableError{Message: fmt.Sprintf(messageNotUpgradeableFormat, c.Message)}
	}
	return nil
}

// SyncConditions is OLM's OperatorCondition status sync: every condition of spec.conditions
// whose status, or the generation it was observed at, differs from status.conditions is
// copied there, stamped with the object's generation. It reports whether the status changed.
func SyncConditions(cond *operatorsv2.OperatorCondition) bool {
	changed := false
	for _, c := range cond.Spec.Conditions {
		if have := meta.FindStatusCondition(cond.Status.Conditions, c.Type); have != nil &&
			have.Status == c.Status && have.ObservedGeneration == cond.Generation {
			continue
		}
		c.ObservedGeneration = cond.Generation
		meta.SetStatusCondition(&cond.Status.Conditions, c)
		changed = true
	}
	return changed
}
