package installplan

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// BundleUnpackTimeoutAnnotation on a namespace's OperatorGroup overrides, for the plans of
// the namespace, how long a bundle image may take to unpack (OLM's
// bundle.BundleUnpackTimeoutAnnotationKey; a Go duration, "0" for no limit).
const BundleUnpackTimeoutAnnotation = "operatorframework.io/bundle-unpack-timeout"

// DefaultBundleUnpackTimeout is OLM's --bundle-unpack-timeout default.
const DefaultBundleUnpackTimeout = 10 * time.Minute

// UnpackTimeout is how long the bundle lookups of a namespace's plans may take: the
// annotation of its one OperatorGroup when set (0: no limit; negative: ignored), else def.
// As in OLM, a namespace without exactly one OperatorGroup, or an annotation that does not
// parse, is an error with OLM's message.
func UnpackTimeout(groups []operatorsv1.OperatorGroup, def time.Duration) (time.Duration, error) {
	if len(groups) != 1 {
		return def, fmt.Errorf("found %d operatorGroups, expected 1", len(groups))
	}
	value, ok := groups[0].Annotations[BundleUnpackTimeoutAnnotation]
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		return def, fmt.Errorf("failed to parse unpack timeout annotation(%s: %s): %w", BundleUnpackTimeoutAnnotation, value, err)
	}
	if d < 0 {
		return def, nil
	}
	return d, nil
}

// Attempt is where the unpacking of one bundle lookup's image stands.
type Attempt struct {
	// CatalogSourceMissing: the lookup's CatalogSource does not exist; nothing was tried.
	CatalogSourceMissing bool
	// Done: the image was unpacked (Err nil) or the last try failed (Err set).
	Done bool
	// Err is why the last try failed, as it may be shown (credentials redacted).
	Err error
	// Permanent: trying again cannot help (the image is no bundle OLM can install).
	Permanent bool
}

// LookupState sums up a bundle lookup.
type LookupState int

const (
	// LookupPending: still unpacking (or waiting for its catalog).
	LookupPending LookupState = iota
	// LookupUnpacked: its steps can go into the plan.
	LookupUnpacked
	// LookupFailed: its image cannot be unpacked; the plan fails.
	LookupFailed
)

// StateOf is where a lookup stands from its conditions alone: Failed when
// BundleLookupFailed is true, Pending while BundleLookupPending or BundleLookupNotPersisted
// is, Unpacked otherwise (OLM removes both once the steps are in the plan).
func StateOf(l *v1alpha1.BundleLookup) LookupState {
	switch {
	case lookupCondition(l, v1alpha1.BundleLookupFailed).Status == corev1.ConditionTrue:
		return LookupFailed
	case lookupCondition(l, v1alpha1.BundleLookupPending).Status == corev1.ConditionTrue,
		lookupCondition(l, v1alpha1.BundleLookupNotPersisted).Status == corev1.ConditionTrue:
		return LookupPending
	}
	return LookupUnpacked
}

// UpdateLookup writes an attempt onto a pending lookup's conditions, as OLM's unpacker does
// with its Job, and returns where the lookup stands:
//
//   - its CatalogSource missing: BundleLookupPending, CatalogSourceMissing;
//   - still unpacking, or a try failed and another will follow: BundleLookupPending,
//     JobIncomplete, "unpack job not completed" (": " and the error after a failed try);
//     its lastTransitionTime is when the unpacking started;
//   - unpacking for longer than timeout (0: no limit): BundleLookupFailed,
//     DeadlineExceeded, "Job was active longer than specified deadline" — the pending
//     condition keeps the last error;
//   - a permanent error: BundleLookupFailed, UnpackFailed, the error;
//   - unpacked: both BundleLookupPending and BundleLookupNotPersisted removed.
//
// A lookup that failed stays failed.
func UpdateLookup(l *v1alpha1.BundleLookup, a Attempt, now metav1.Time, timeout time.Duration) LookupState {
	if StateOf(l) == LookupFailed {
		return LookupFailed
	}
	switch {
	case a.CatalogSourceMissing:
		setLookupCondition(l, v1alpha1.BundleLookupPending, v1alpha1.BundleLookupReasonCatalogSourceMissing, v1alpha1.BundleLookupMessageCatalogSourceMissing, now)
		return LookupPending
	case a.Done && a.Err == nil:
		removeLookupCondition(l, v1alpha1.BundleLookupPending)
		removeLookupCondition(l, v1alpha1.BundleLookupNotPersisted)
		return LookupUnpacked
	case a.Done && a.Permanent:
		setLookupCondition(l, v1alpha1.BundleLookupFailed, v1alpha1.BundleLookupReasonUnpackFailed, a.Err.Error(), now)
		return LookupFailed
	}
	msg := v1alpha1.BundleLookupMessageJobIncomplete
	if a.Err != nil {
		msg += ": " + a.Err.Error()
	}
	setLookupCondition(l, v1alpha1.BundleLookupPending, v1alpha1.BundleLookupReasonJobIncomplete, msg, now)
	started := lookupCondition(l, v1alpha1.BundleLookupPending).LastTransitionTime
	if timeout > 0 && started != nil && now.Sub(started.Time) >= timeout {
		setLookupCondition(l, v1alpha1.BundleLookupFailed, v1alpha1.BundleLookupReasonDeadlineExceeded, v1alpha1.BundleLookupMessageDeadlineExceeded, now)
		return LookupFailed
	}
	return LookupPending
}

// LastUnpackError is the error of the last failed try to unpack the lookup's image, as its
// BundleLookupPending condition holds it after OLM's message ("unpack job not completed:
// <error>"), or "" when the last try did not fail.
func LastUnpackError(l *v1alpha1.BundleLookup) string {
	c := lookupCondition(l, v1alpha1.BundleLookupPending)
	if detail, ok := strings.CutPrefix(c.Message, v1alpha1.BundleLookupMessageJobIncomplete+": "); ok {
		return detail
	}
	return ""
}

// FailedLookup is the first lookup of the plan whose BundleLookupFailed is true, and that
// condition.
func FailedLookup(lookups []v1alpha1.BundleLookup) (*v1alpha1.BundleLookup, *v1alpha1.BundleLookupCondition) {
	for i := range lookups {
		if c := lookupCondition(&lookups[i], v1alpha1.BundleLookupFailed); c.Status == corev1.ConditionTrue {
			return &lookups[i], &c
		}
	}
	return nil, nil
}

// lookupCondition returns the condition of type t, or one of status Unknown (OLM's
// GetCondition).
func lookupCondition(l *v1alpha1.BundleLookup, t v1alpha1.BundleLookupConditionType) v1alpha1.BundleLookupCondition {
	for _, c := range l.Conditions {
		if c.Type == t {
			return c
		}
	}
	return v1alpha1.BundleLookupCondition{Type: t, Status: corev1.ConditionUnknown}
}

// setLookupCondition sets a condition to True with reason and message. As OLM's
// SetCondition, the transition time stays when the status and reason do: a pending
// condition keeps the time unpacking started while its message follows the last error.
func setLookupCondition(l *v1alpha1.BundleLookup, t v1alpha1.BundleLookupConditionType, reason, message string, now metav1.Time) {
	c := v1alpha1.BundleLookupCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastUpdateTime: &now, LastTransitionTime: &now}
	for i := range l.Conditions {
		old := &l.Conditions[i]
		if old.Type != t {
			continue
		}
		if old.Status == c.Status && old.Reason == c.Reason {
			if old.Message == c.Message {
				return // nothing changed: leave the times alone, so the status is not rewritten
			}
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	l.Conditions = append(l.Conditions, c)
}

func removeLookupCondition(l *v1alpha1.BundleLookup, t v1alpha1.BundleLookupConditionType) {
	kept := l.Conditions[:0]
	for _, c := range l.Conditions {
		if c.Type != t {
			kept = append(kept, c)
		}
	}
	l.Conditions = kept
	if len(l.Conditions) == 0 {
		l.Conditions = nil
	}
}
