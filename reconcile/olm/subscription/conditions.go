package subscription

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// Condition returns the condition of type t, or nil.
func Condition(st *v1alpha1.SubscriptionStatus, t v1alpha1.SubscriptionConditionType) *v1alpha1.SubscriptionCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// IsTrue reports whether the condition of type t is present and True.
func IsTrue(st *v1alpha1.SubscriptionStatus, t v1alpha1.SubscriptionConditionType) bool {
	c := Condition(st, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// SetCondition adds or replaces the condition of c.Type. The transition time moves to now
// only when the status changes, as the Kubernetes API conventions ask; it reports whether
// anything changed.
func SetCondition(st *v1alpha1.SubscriptionStatus, c v1alpha1.SubscriptionCondition, now metav1.Time) bool {
	old := Condition(st, c.Type)
	if old == nil {
		c.LastTransitionTime = &now
		st.Conditions = append(st.Conditions, c)
		return true
	}
	if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
		return false
	}
	if old.Status == c.Status && old.LastTransitionTime != nil {
		c.LastTransitionTime = old.LastTransitionTime
	} else {
		c.LastTransitionTime = &now
	}
	*old = c
	return true
}

// RemoveCondition drops the conditions of the given types; it reports whether any was there.
func RemoveCondition(st *v1alpha1.SubscriptionStatus, types ...v1alpha1.SubscriptionConditionType) bool {
	kept := st.Conditions[:0]
	removed := false
	for _, c := range st.Conditions {
		drop := false
		for _, t := range types {
			if c.Type == t {
				drop = true
				break
			}
		}
		if drop {
			removed = true
			continue
		}
		kept = append(kept, c)
	}
	st.Conditions = kept
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
	return removed
}
