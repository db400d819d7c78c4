package phase

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

func TestSetPhase(t *testing.T) {
	earlier := metav1.NewTime(now.Add(-time.Hour))
	at := metav1.NewTime(now)
	cond := func(phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason, message string, update, transition metav1.Time) v1alpha1.ClusterServiceVersionCondition {
		return v1alpha1.ClusterServiceVersionCondition{Phase: phase, Reason: reason, Message: message, LastUpdateTime: &update, LastTransitionTime: &transition}
	}
	pending := func() *v1alpha1.ClusterServiceVersion {
		c := csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, earlier.Time)
		c.Status.LastUpdateTime = earlier.DeepCopy()
		c.Status.Conditions = []v1alpha1.ClusterServiceVersionCondition{cond(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, earlier, earlier)}
		return c
	}
	tests := []struct {
		name        string
		csv         *v1alpha1.ClusterServiceVersion
		t           *struct{ phase, reason, message string }
		wantChanged bool
		want        v1alpha1.ClusterServiceVersionStatus
	}{
		{
			name: "the same phase, reason and message leave the status alone",
			csv:  pending(),
			t:    &struct{ phase, reason, message string }{"Pending", "RequirementsUnknown", MessageRequirementsNotChecked},
			want: pending().Status,
		},
		{
			name:        "a new message alone updates the status, not the history",
			csv:         pending(),
			t:           &struct{ phase, reason, message string }{"Pending", "RequirementsUnknown", "other"},
			wantChanged: true,
			want: func() v1alpha1.ClusterServiceVersionStatus {
				s := pending().Status
				s.Message, s.LastUpdateTime = "other", at.DeepCopy()
				return s
			}(),
		},
		{
			name:        "a new reason in the same phase is history, the transition time stays",
			csv:         pending(),
			t:           &struct{ phase, reason, message string }{"Pending", "RequirementsNotMet", MessageRequirementsNotFound},
			wantChanged: true,
			want: func() v1alpha1.ClusterServiceVersionStatus {
				s := pending().Status
				s.Reason, s.Message, s.LastUpdateTime = v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotFound, at.DeepCopy()
				s.Conditions = append(s.Conditions, cond(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotFound, at, earlier))
				return s
			}(),
		},
		{
			name:        "a new phase moves the transition time",
			csv:         pending(),
			t:           &struct{ phase, reason, message string }{"InstallReady", "AllRequirementsMet", MessageAllRequirementsMet},
			wantChanged: true,
			want: func() v1alpha1.ClusterServiceVersionStatus {
				s := pending().Status
				s.Phase, s.Reason, s.Message = v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVReasonRequirementsMet, MessageAllRequirementsMet
				s.LastUpdateTime, s.LastTransitionTime = at.DeepCopy(), at.DeepCopy()
				s.Conditions = append(s.Conditions, cond(v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVReasonRequirementsMet, MessageAllRequirementsMet, at, at))
				return s
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SetPhase(tt.csv, *tr(v1alpha1.ClusterServiceVersionPhase(tt.t.phase), v1alpha1.ConditionReason(tt.t.reason), tt.t.message), at)
			if got != tt.wantChanged {
				t.Errorf("SetPhase = %v, want %v", got, tt.wantChanged)
			}
			if diff := cmp.Diff(tt.want, tt.csv.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetPhaseKeepsTheNewestHistory: the history never grows past ConditionsLimit entries and
// drops the oldest.
func TestSetPhaseKeepsTheNewestHistory(t *testing.T) {
	c := csvIn(v1alpha1.CSVPhaseNone, "", "", time.Time{})
	for i := range ConditionsLimit + 5 {
		phase := v1alpha1.CSVPhasePending
		if i%2 == 1 {
			phase = v1alpha1.CSVPhaseFailed
		}
		SetPhase(c, *tr(phase, v1alpha1.ConditionReason(fmt.Sprintf("R%d", i)), ""), metav1.NewTime(now.Add(time.Duration(i)*time.Second)))
	}
	if n := len(c.Status.Conditions); n != ConditionsLimit {
		t.Fatalf("%d conditions, want %d", n, ConditionsLimit)
	}
	if first, last := c.Status.Conditions[0].Reason, c.Status.Conditions[ConditionsLimit-1].Reason; first != "R5" || last != "R24" {
		t.Errorf("history runs from %s to %s, want R5 to R24", first, last)
	}
}
