package phase

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// ConditionsLimit is how many entries of phase history a CSV keeps (OLM's ConditionsLengthLimit);
// the oldest are dropped.
const ConditionsLimit = 20

// Changes reports whether applying t would change the CSV's phase, reason or message.
func Changes(csv *v1alpha1.ClusterServiceVersion, t groups.Transition) bool {
	s := csv.Status
	return s.Phase != t.Phase || s.Reason != t.Reason || s.Message != t.Message
}

// SetPhase writes a transition into the CSV's status as OLM does, and reports whether it did:
// a transition that changes neither phase, reason nor message is not written at all, so that a
// repeated sync leaves the status (and its timestamps) alone. Otherwise lastUpdateTime becomes
// now, lastTransitionTime too when the phase changes, and a condition recording the new phase,
// reason, message and times is appended to the history when the phase or the reason differ from
// the last entry's (a new message alone updates the status but not the history). The history
// keeps the newest ConditionsLimit entries.
func SetPhase(csv *v1alpha1.ClusterServiceVersion, t groups.Transition, now metav1.Time) bool {
	if !Changes(csv, t) {
		return false
	}
	s := &csv.Status
	s.LastUpdateTime = now.DeepCopy()
	if s.Phase != t.Phase {
		s.Phase = t.Phase
		s.LastTransitionTime = now.DeepCopy()
	}
	s.Reason, s.Message = t.Reason, t.Message
	if n := len(s.Conditions); n == 0 || s.Conditions[n-1].Phase != s.Phase || s.Conditions[n-1].Reason != s.Reason {
		s.Conditions = append(s.Conditions, v1alpha1.ClusterServiceVersionCondition{
			Phase:              s.Phase,
			Reason:             s.Reason,
			Message:            s.Message,
			LastUpdateTime:     s.LastUpdateTime.DeepCopy(),
			LastTransitionTime: s.LastTransitionTime.DeepCopy(),
		})
	}
	if n := len(s.Conditions); n > ConditionsLimit {
		s.Conditions = append([]v1alpha1.ClusterServiceVersionCondition(nil), s.Conditions[n-ConditionsLimit:]...)
	}
	return true
}
