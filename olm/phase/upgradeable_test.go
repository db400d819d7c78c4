package phase

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
)

func opCondition(generation int64, overrides, status []metav1.Condition) *operatorsv2.OperatorCondition {
	c := &operatorsv2.OperatorCondition{}
	c.Name, c.Namespace, c.Generation = "etcd.v0.9.0", "ns", generation
	c.Spec.Overrides, c.Status.Conditions = overrides, status
	return c
}

func upgradeable(status metav1.ConditionStatus, generation int64, message string) metav1.Condition {
	return metav1.Condition{Type: "Upgradeable", Status: status, ObservedGeneration: generation, Reason: "Migration", Message: message}
}

// TestUpgradeable holds OLM's isOperatorUpgradeable (OLM pkg/controller/operators/olm/
// operatorconditions.go:15-54) and its literal messages (lines 40, 47 and 50).
func TestUpgradeable(t *testing.T) {
	tests := []struct {
		name string
		cond *operatorsv2.OperatorCondition
		want string // "" when upgradeable
	}{
		{name: "no OperatorCondition", cond: nil},
		{name: "no Upgradeable condition", cond: opCondition(1, nil, nil)},
		{name: "Upgradeable=True", cond: opCondition(2, nil, []metav1.Condition{upgradeable(metav1.ConditionTrue, 2, "ok")})},
		{
			name: "Upgradeable=False",
			cond: opCondition(2, nil, []metav1.Condition{upgradeable(metav1.ConditionFalse, 2, "migration in progress")}),
			want: "the operator is not upgradeable: migration in progress",
		},
		{
			name: "Upgradeable observed at an older generation",
			cond: opCondition(3, nil, []metav1.Condition{upgradeable(metav1.ConditionTrue, 2, "ok")}),
			want: `the operatorcondition status "Upgradeable"="True" is outdated`,
		},
		{
			name: "an override True wins over status False",
			cond: opCondition(2, []metav1.Condition{upgradeable(metav1.ConditionTrue, 0, "admin says go")}, []metav1.Condition{upgradeable(metav1.ConditionFalse, 2, "no")}),
		},
		{
			name: "an override False wins over status True",
			cond: opCondition(2, []metav1.Condition{upgradeable(metav1.ConditionFalse, 0, "admin says wait")}, []metav1.Condition{upgradeable(metav1.ConditionTrue, 2, "ok")}),
			want: "the operator is not upgradeable: admin says wait",
		},
		{
			name: "an override of Unknown holds it back too",
			cond: opCondition(2, []metav1.Condition{upgradeable(metav1.ConditionUnknown, 0, "unsure")}, nil),
			want: "the operator is not upgradeable: unsure",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Upgradeable(tt.cond)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Upgradeable() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSyncConditions holds OLM's syncOperatorConditionStatus (OLM pkg/controller/operators/
// operatorcondition_controller.go:262-280): spec.conditions are copied to status, stamped with
// the generation, and nothing changes when status already says so at this generation.
func TestSyncConditions(t *testing.T) {
	spec := []metav1.Condition{{Type: "Upgradeable", Status: metav1.ConditionFalse, Reason: "Migration", Message: "in progress"}}
	cond := opCondition(4, nil, nil)
	cond.Spec.Conditions = spec
	if !SyncConditions(cond) {
		t.Fatal("first sync reported no change")
	}
	want := []metav1.Condition{{Type: "Upgradeable", Status: metav1.ConditionFalse, ObservedGeneration: 4, Reason: "Migration", Message: "in progress"}}
	if diff := cmp.Diff(want, cond.Status.Conditions, cmp.Comparer(func(a, b metav1.Time) bool { return true })); diff != "" {
		t.Errorf("status.conditions (-want +got):\n%s", diff)
	}
	if SyncConditions(cond) {
		t.Error("second sync at the same generation reported a change")
	}
	cond.Generation = 5
	if !SyncConditions(cond) || cond.Status.Conditions[0].ObservedGeneration != 5 {
		t.Errorf("a new generation was not observed: %+v", cond.Status.Conditions)
	}
	if err := Upgradeable(cond); err == nil || err.Error() != "the operator is not upgradeable: in progress" {
		t.Errorf("Upgradeable after sync = %v", err)
	}
}
