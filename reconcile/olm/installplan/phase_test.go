package installplan

import (
	"testing"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

func TestNext(t *testing.T) {
	steps := []v1alpha1.Step{{Status: v1alpha1.StepStatusUnknown}}
	lookups := []v1alpha1.BundleLookup{{Identifier: "a.v1"}}
	tests := []struct {
		name       string
		phase      v1alpha1.InstallPlanPhase
		approval   v1alpha1.Approval
		approved   bool
		steps      []v1alpha1.Step
		lookups    []v1alpha1.BundleLookup
		wantPhase  v1alpha1.InstallPlanPhase
		wantAction Action
	}{
		{"new, without steps", "", v1alpha1.ApprovalAutomatic, true, nil, nil, v1alpha1.InstallPlanPhasePlanning, ActionPlan},
		{"still planning", v1alpha1.InstallPlanPhasePlanning, v1alpha1.ApprovalAutomatic, true, nil, nil, v1alpha1.InstallPlanPhasePlanning, ActionPlan},
		{"new with steps, automatic", "", v1alpha1.ApprovalAutomatic, true, steps, nil, v1alpha1.InstallPlanPhaseInstalling, ActionInstall},
		{"bundle lookups count as planned", "", v1alpha1.ApprovalAutomatic, true, nil, lookups, v1alpha1.InstallPlanPhaseInstalling, ActionInstall},
		{"manual, not approved", v1alpha1.InstallPlanPhasePlanning, v1alpha1.ApprovalManual, false, steps, nil, v1alpha1.InstallPlanPhaseRequiresApproval, ActionWaitApproval},
		{"manual, approved", v1alpha1.InstallPlanPhaseRequiresApproval, v1alpha1.ApprovalManual, true, steps, nil, v1alpha1.InstallPlanPhaseInstalling, ActionInstall},
		{"installing stays installing even if unapproved later", v1alpha1.InstallPlanPhaseInstalling, v1alpha1.ApprovalManual, false, steps, nil, v1alpha1.InstallPlanPhaseInstalling, ActionInstall},
		{"complete is final", v1alpha1.InstallPlanPhaseComplete, v1alpha1.ApprovalAutomatic, true, steps, nil, v1alpha1.InstallPlanPhaseComplete, ActionNone},
		{"failed is final", v1alpha1.InstallPlanPhaseFailed, v1alpha1.ApprovalAutomatic, true, nil, nil, v1alpha1.InstallPlanPhaseFailed, ActionNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ip := &v1alpha1.InstallPlan{}
			ip.Status.Phase, ip.Spec.Approval, ip.Spec.Approved = tt.phase, tt.approval, tt.approved
			ip.Status.Plan, ip.Status.BundleLookups = tt.steps, tt.lookups
			phase, action := Next(ip)
			if phase != tt.wantPhase || action != tt.wantAction {
				t.Errorf("Next = %s, %q; want %s, %q", phase, action, tt.wantPhase, tt.wantAction)
			}
		})
	}
}

func TestDone(t *testing.T) {
	step := func(s v1alpha1.StepStatus) v1alpha1.Step { return v1alpha1.Step{Status: s} }
	tests := []struct {
		name  string
		steps []v1alpha1.Step
		want  bool
	}{
		{"created and present", []v1alpha1.Step{step(v1alpha1.StepStatusCreated), step(v1alpha1.StepStatusPresent)}, true},
		{"one unknown", []v1alpha1.Step{step(v1alpha1.StepStatusCreated), step(v1alpha1.StepStatusUnknown)}, false},
		{"waiting for an api", []v1alpha1.Step{step(v1alpha1.StepStatusWaitingForAPI)}, false},
		{"not present", []v1alpha1.Step{step(v1alpha1.StepStatusNotPresent)}, false},
	}
	for _, tt := range tests {
		if got := Done(tt.steps); got != tt.want {
			t.Errorf("%s: Done = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestInstalledAlongside(t *testing.T) {
	k1, v1 := InstalledAlongside("ns", "a.v1")
	k2, _ := InstalledAlongside("ns", "a.v2")
	if k1 == k2 || v1 != "ns/a.v1" {
		t.Errorf("keys %s, %s, value %s", k1, k2, v1)
	}
	kept := withoutAlongside(map[string]string{k1: "ns/a.v1", k2: "other/a.v2", "x": "y"}, "ns")
	if _, ok := kept[k1]; ok || kept[k2] != "other/a.v2" || kept["x"] != "y" {
		t.Errorf("withoutAlongside kept %v", kept)
	}
}

func TestWroteNothing(t *testing.T) {
	plan := func(phase v1alpha1.InstallPlanPhase, reason v1alpha1.InstallPlanConditionReason, steps ...v1alpha1.StepStatus) *v1alpha1.InstallPlan {
		ip := &v1alpha1.InstallPlan{}
		ip.Status.Phase = phase
		if reason != "" {
			ip.Status.Conditions = []v1alpha1.InstallPlanCondition{{Type: v1alpha1.InstallPlanInstalled, Status: "False", Reason: reason}}
		}
		for _, s := range steps {
			ip.Status.Plan = append(ip.Status.Plan, v1alpha1.Step{Status: s})
		}
		return ip
	}
	failed, unpack := v1alpha1.InstallPlanReasonComponentFailed, v1alpha1.InstallPlanReasonInstallCheckFailed
	tests := []struct {
		name string
		ip   *v1alpha1.InstallPlan
		want bool
	}{
		{"failed before any step", plan(v1alpha1.InstallPlanPhaseFailed, failed, v1alpha1.StepStatusUnknown, v1alpha1.StepStatusUnknown), true},
		{"failed after the csv was created", plan(v1alpha1.InstallPlanPhaseFailed, failed, v1alpha1.StepStatusCreated, v1alpha1.StepStatusUnknown), false},
		{"failed after an object was updated", plan(v1alpha1.InstallPlanPhaseFailed, failed, v1alpha1.StepStatusUnknown, v1alpha1.StepStatusPresent), false},
		{"a bundle that could not be unpacked", plan(v1alpha1.InstallPlanPhaseFailed, unpack), false},
		{"still installing", plan(v1alpha1.InstallPlanPhaseInstalling, "", v1alpha1.StepStatusUnknown), false},
	}
	for _, tt := range tests {
		if got := WroteNothing(tt.ip); got != tt.want {
			t.Errorf("%s: WroteNothing = %v, want %v", tt.name, got, tt.want)
		}
	}
}
