package phase

import (
	"errors"
	"fmt"
	"time"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
)

// InstallTimeout is how long a CSV may stay Installing with a component that is not healthy
// before OLM fails it with "install timeout".
const InstallTimeout = 5 * time.Minute

// The phase messages OLM writes (OLM pkg/controller/operators/olm/operator.go), verbatim.
const (
	MessageRequirementsNotChecked = "requirements not yet checked"
	MessageRequirementsNotFound   = "one or more requirements couldn't be found"
	MessageRequirementsNotMet     = "requirements not met"
	MessageRequirementsLost       = "requirements no longer met"
	MessageAllRequirementsMet     = "all requirements found, attempting install"
	MessageInstallWaiting         = "waiting for install components to report healthy"
	MessageInstallSucceeded       = "install strategy completed with no errors"
	MessageInstallTimeout         = "install timeout"
	MessageOwnerConflict          = "conflicting CRD owner in namespace"
	MessageReplaced               = "has been replaced by a newer ClusterServiceVersion that has successfully installed."
	messageBeingReplacedFormat    = "being replaced by csv: %s"
	messageFailForwardFormat      = "Fail Forward is enabled, allowing %s csv to be replaced by csv: %s"
	messageInvalidStrategyFormat  = "install strategy invalid: %s"
	messageInstallFailedFormat    = "install strategy failed: %s"
	messageInstallCheckFmt        = "install failed: %s"
	messageInstallingFormat       = "installing: %s"
)

// ErrNoReplacement is the sync error of a Replacing CSV whose replacement is gone: it stays
// Replacing until a CSV replaces it again (OLM's message).
var ErrNoReplacement = errors.New("marked as replacement, but no replacement CSV found in cluster")

// Facts is what the phase machine knows about a CSV at one sync. The caller gathers it from the
// cluster (the controller) or from rendered manifests (the offline check).
type Facts struct {
	// Now is the time of the sync.
	Now time.Time
	// Groups is the outcome of the OperatorGroup checks (groups.Evaluate).
	Groups groups.Evaluation
	// Strategy is why the install strategy cannot run (install.Validate), nil when it can.
	Strategy error
	// Requirements is the outcome of CheckRequirements.
	Requirements Requirements
	// Replaces is the non-copied CSV of the namespace that this CSV's spec.replaces names, nil
	// when there is none. ReplacedBy is one whose spec.replaces names this CSV.
	Replaces, ReplacedBy *v1alpha1.ClusterServiceVersion
	// ReplacesNotUpgradeable is why the operator of Replaces may not be replaced now
	// (Upgradeable over its OperatorCondition), nil when it may.
	ReplacesNotUpgradeable error
	// NewestReplacement is the last CSV of the replacement chain starting at ReplacedBy; only
	// read for a group with the TechPreviewUnsafeFailForward upgrade strategy.
	NewestReplacement *v1alpha1.ClusterServiceVersion
	// OwnerConflict is set when another CSV of the namespace, outside this CSV's replacement
	// chain, owns one of the CRDs this one owns (OwnerConflict).
	OwnerConflict bool
	// Installed is the health of the install strategy's deployments (install.Check): nil when
	// all are there and ready.
	Installed *install.StrategyError
}

// Decision is what OLM does with a CSV at one sync.
type Decision struct {
	// Transition is the CSV's new phase, reason and message; nil when they stay.
	Transition *groups.Transition
	// Requirements are written to status.requirementStatus when WriteRequirements is set.
	Requirements      []v1alpha1.RequirementStatus
	WriteRequirements bool
	// Install says the install strategy runs now; the caller then calls AfterInstall with its
	// error for the transition.
	Install bool
	// DeleteDeployments says the CSV's deployments are deleted (an OperatorGroup API conflict).
	DeleteDeployments bool
	// Delete says the CSV itself is deleted (phase Deleting).
	Delete bool
	// CountUpgrade says a CSV moved to Replacing: csv_upgrade_count goes up.
	CountUpgrade bool
	// Wait says why the CSV does not move although nothing failed; RequeueAfter, when set,
	// is when to look again even if nothing around it changes.
	Wait         string
	RequeueAfter time.Duration
	// Err is a sync error (ErrNoReplacement).
	Err error
}

// Next is OLM's CSV state machine for one sync (olm-behaviour 3.1, 3.2 and 3.5): the
// OperatorGroup checks first, then the phase's own rules. Copied CSVs and CSVs failed with
// InstallComponentFailedNoRetry are left alone.
func Next(csv *v1alpha1.ClusterServiceVersion, f Facts) Decision {
	if f.Groups.Skipped != "" {
		return Decision{}
	}
	if t := f.Groups.Transition; t != nil {
		return groupFailure(csv, *t, f.Groups.DeleteDeployments)
	}
	switch csv.Status.Phase {
	case v1alpha1.CSVPhaseNone:
		return to(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked)
	case v1alpha1.CSVPhasePending:
		return pending(csv, f)
	case v1alpha1.CSVPhaseInstallReady:
		if f.Strategy != nil {
			return invalidStrategy(f.Strategy)
		}
		return Decision{Install: true}
	case v1alpha1.CSVPhaseInstalling:
		return installing(csv, f)
	case v1alpha1.CSVPhaseSucceeded:
		return succeeded(csv, f)
	case v1alpha1.CSVPhaseFailed:
		return failedPhase(csv, f)
	case v1alpha1.CSVPhaseReplacing:
		return replacing(csv, f)
	case v1alpha1.CSVPhaseDeleting:
		return Decision{Delete: true}
	}
	return Decision{Wait: fmt.Sprintf("unknown phase %q", csv.Status.Phase)}
}

// AfterInstall is the transition once the install strategy ran in InstallReady: Installing
// when it went through, Failed otherwise (InstallComponentFailedNoRetry when OLM would not retry).
func AfterInstall(err error) groups.Transition {
	switch {
	case err == nil:
		return transition(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonInstallSuccessful, MessageInstallWaiting)
	case install.IsUnrecoverable(err):
		return transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailedNoRetry, fmt.Sprintf(messageInstallFailedFormat, err))
	default:
		return transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailed, fmt.Sprintf(messageInstallFailedFormat, err))
	}
}

// groupFailure applies a failed OperatorGroup check. OLM writes a conflict only once: a CSV
// already failed with InterOperatorGroupOwnerConflict keeps that reason (and its deployments
// are not deleted again).
func groupFailure(csv *v1alpha1.ClusterServiceVersion, t groups.Transition, deleteDeployments bool) Decision {
	if csv.Status.Reason == v1alpha1.CSVReasonInterOperatorGroupOwnerConflict &&
		(t.Reason == v1alpha1.CSVReasonInterOperatorGroupOwnerConflict ||
			t.Reason == v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs) {
		return Decision{}
	}
	if !Changes(csv, t) {
		return Decision{}
	}
	return Decision{Transition: &t, DeleteDeployments: deleteDeployments}
}

func pending(csv *v1alpha1.ClusterServiceVersion, f Facts) Decision {
	// OLM looks at the replaced operator's Upgradeable condition before anything else: an
	// operator mid-migration says False, and its replacement waits in Pending.
	if f.Replaces != nil && f.ReplacesNotUpgradeable != nil {
		t := transition(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonOperatorConditionNotUpgradeable,
			fmt.Sprintf(messageReplacedNotUpgradeableFmt, f.ReplacesNotUpgradeable))
		return Decision{Transition: ifChanged(csv, t), Wait: t.Message}
	}
	if f.Strategy != nil {
		return invalidStrategy(f.Strategy)
	}
	d := Decision{Requirements: f.Requirements.Statuses, WriteRequirements: true}
	switch {
	case !f.Requirements.Met:
		d.Transition = ifChanged(csv, transition(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotFound))
	case f.OwnerConflict:
		d.Transition = ifChanged(csv, transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonOwnerConflict, MessageOwnerConflict))
	case f.Replaces != nil && f.Replaces.Status.Phase != v1alpha1.CSVPhaseReplacing:
		d.Wait = fmt.Sprintf("waiting for %s, which this csv replaces, to be Replacing (it is %q)", f.Replaces.Name, f.Replaces.Status.Phase)
	default:
		t := transition(v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVReasonRequirementsMet, MessageAllRequirementsMet)
		d.Transition = &t
	}
	return d
}

func installing(csv *v1alpha1.ClusterServiceVersion, f Facts) Decision {
	if f.Strategy != nil {
		return invalidStrategy(f.Strategy)
	}
	d := installStatus(csv, f.Installed, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
	if f.Installed == nil || d.Transition != nil && d.Transition.Phase != v1alpha1.CSVPhaseInstalling {
		return d
	}
	// Still waiting: fail once it has waited too long since the phase began.
	if since := csv.Status.LastTransitionTime; since != nil {
		waited := f.Now.Sub(since.Time)
		if waited >= InstallTimeout {
			t := transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInstallCheckFailed, MessageInstallTimeout)
			return Decision{Transition: &t}
		}
		d.RequeueAfter = InstallTimeout - waited
	}
	d.Wait = f.Installed.Message
	return d
}

func succeeded(csv *v1alpha1.ClusterServiceVersion, f Facts) Decision {
	if f.ReplacedBy != nil {
		t := transition(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced, fmt.Sprintf(messageBeingReplacedFormat, f.ReplacedBy.Name))
		return Decision{Transition: &t, CountUpgrade: true}
	}
	if f.Strategy != nil {
		return invalidStrategy(f.Strategy)
	}
	if !f.Requirements.Met {
		t := transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsLost)
		return Decision{Transition: &t, Requirements: f.Requirements.Statuses, WriteRequirements: true}
	}
	return installStatus(csv, f.Installed, v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentUnhealthy)
}

func failedPhase(csv *v1alpha1.ClusterServiceVersion, f Facts) Decision {
	if f.ReplacedBy != nil && f.Groups.Membership.Group != nil &&
		f.Groups.Membership.Group.EffectiveUpgradeStrategy() == operatorsv1.UpgradeStrategyUnsafeFailForward {
		t := transition(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced,
			fmt.Sprintf(messageFailForwardFormat, csv.Status.Phase, f.ReplacedBy.Name))
		return Decision{Transition: &t, CountUpgrade: true}
	}
	if t := groups.Recovery(csv); t != nil {
		return Decision{Transition: t}
	}
	// A failure that would come straight back stays as it is: OLM would move the CSV to
	// Pending and fail it again on the next sync, forever.
	switch {
	case f.Strategy != nil:
		if csv.Status.Reason == v1alpha1.CSVReasonInvalidStrategy {
			return Decision{Wait: f.Strategy.Error()}
		}
		return invalidStrategy(f.Strategy)
	case csv.Status.Reason == v1alpha1.CSVReasonOwnerConflict && f.OwnerConflict:
		return Decision{Wait: MessageOwnerConflict}
	}
	if !f.Requirements.Met {
		t := transition(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotMet)
		return Decision{Transition: &t, Requirements: f.Requirements.Statuses, WriteRequirements: true}
	}
	return installStatus(csv, f.Installed, v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsReinstall)
}

func replacing(csv *v1alpha1.ClusterServiceVersion, f Facts) Decision {
	// Only the oldest CSV of a replacement chain moves on: deleting one in the middle would
	// break the chain.
	if f.Replaces != nil {
		return Decision{Wait: fmt.Sprintf("replaces %s, which goes first", f.Replaces.Name)}
	}
	next := f.ReplacedBy
	if next != nil && f.NewestReplacement != nil && f.Groups.Membership.Group != nil &&
		f.Groups.Membership.Group.EffectiveUpgradeStrategy() == operatorsv1.UpgradeStrategyUnsafeFailForward {
		next = f.NewestReplacement
	}
	switch {
	case next == nil:
		return Decision{Err: ErrNoReplacement}
	case next.Status.Phase == v1alpha1.CSVPhaseSucceeded:
		t := transition(v1alpha1.CSVPhaseDeleting, v1alpha1.CSVReasonReplaced, MessageReplaced)
		return Decision{Transition: &t}
	default:
		return Decision{Wait: fmt.Sprintf("waiting for %s, which replaces this csv, to succeed (it is %q)", next.Name, next.Status.Phase)}
	}
}

// installStatus is OLM's updateInstallStatus: Succeeded when the deployments are healthy;
// Failed/InstallCheckFailed past a progress deadline; back to InstallReady (with the given
// reason) when they must be rewritten; else the given phase and reason with "installing: ...".
// Nothing changes when the CSV already says so.
func installStatus(csv *v1alpha1.ClusterServiceVersion, installed *install.StrategyError, phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason) Decision {
	var t groups.Transition
	switch {
	case installed == nil:
		t = transition(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded)
	case installed.Unrecoverable():
		t = transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInstallCheckFailed, fmt.Sprintf(messageInstallCheckFmt, installed.Message))
	case installed.NeedsReinstall():
		t = transition(v1alpha1.CSVPhaseInstallReady, reason, fmt.Sprintf(messageInstallingFormat, installed.Message))
	default:
		t = transition(phase, reason, fmt.Sprintf(messageInstallingFormat, installed.Message))
	}
	return Decision{Transition: ifChanged(csv, t)}
}

func invalidStrategy(err error) Decision {
	t := transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInvalidStrategy, fmt.Sprintf(messageInvalidStrategyFormat, err))
	return Decision{Transition: &t}
}

func to(phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason, message string) Decision {
	t := transition(phase, reason, message)
	return Decision{Transition: &t}
}

func transition(phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason, message string) groups.Transition {
	return groups.Transition{Phase: phase, Reason: reason, Message: message}
}

// ifChanged returns t, or nil when the CSV already has its phase, reason and message.
func ifChanged(csv *v1alpha1.ClusterServiceVersion, t groups.Transition) *groups.Transition {
	if !Changes(csv, t) {
		return nil
	}
	return &t
}
