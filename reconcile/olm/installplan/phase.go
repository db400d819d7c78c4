package installplan

import (
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// Action is what one sync does with an InstallPlan in its current phase.
type Action string

const (
	// ActionNone: nothing to do (Complete, Failed).
	ActionNone Action = ""
	// ActionPlan: fill status.plan from the catalogs (it is empty).
	ActionPlan Action = "Plan"
	// ActionWaitApproval: a Manual plan not approved yet.
	ActionWaitApproval Action = "WaitApproval"
	// ActionInstall: execute the steps.
	ActionInstall Action = "Install"
)

// Next is the phase an InstallPlan moves to before this sync acts, and what the sync does:
// a new plan is Planning; a planned one (steps or bundle lookups in its status) needs approval
// when it is Manual and not approved, and installs otherwise. Complete and Failed are final.
func Next(ip *v1alpha1.InstallPlan) (v1alpha1.InstallPlanPhase, Action) {
	planned := len(ip.Status.Plan) > 0 || len(ip.Status.BundleLookups) > 0
	switch ip.Status.Phase {
	case v1alpha1.InstallPlanPhaseComplete, v1alpha1.InstallPlanPhaseFailed:
		return ip.Status.Phase, ActionNone
	case v1alpha1.InstallPlanPhaseInstalling:
		return v1alpha1.InstallPlanPhaseInstalling, ActionInstall
	}
	if !planned {
		return v1alpha1.InstallPlanPhasePlanning, ActionPlan
	}
	if ip.Spec.Approval == v1alpha1.ApprovalManual && !ip.Spec.Approved {
		return v1alpha1.InstallPlanPhaseRequiresApproval, ActionWaitApproval
	}
	return v1alpha1.InstallPlanPhaseInstalling, ActionInstall
}

// Done reports whether every step of the plan is executed.
func Done(steps []v1alpha1.Step) bool {
	for _, s := range steps {
		if s.Status != v1alpha1.StepStatusCreated && s.Status != v1alpha1.StepStatusPresent {
			return false
		}
	}
	return true
}

// WroteNothing reports whether a plan failed executing (Installed=False,
// InstallComponentFailed) before any of its steps was executed (none Created or Present): a
// plan whose CRD update was refused before anything was written. Such a plan changed
// nothing on the cluster, so a new plan for the same resolution may take its place. A plan
// whose bundles could not be unpacked (InstallCheckFailed) is not one: its image will not
// change.
func WroteNothing(ip *v1alpha1.InstallPlan) bool {
	if ip.Status.Phase != v1alpha1.InstallPlanPhaseFailed {
		return false
	}
	failed := false
	for _, c := range ip.Status.Conditions {
		failed = failed || c.Type == v1alpha1.InstallPlanInstalled && c.Reason == v1alpha1.InstallPlanReasonComponentFailed
	}
	if !failed {
		return false
	}
	for _, s := range ip.Status.Plan {
		if s.Status == v1alpha1.StepStatusCreated || s.Status == v1alpha1.StepStatusPresent {
			return false
		}
	}
	return true
}
