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
	// The messages of what a strategy makes besides its deployments (OLM's
	// updateInstallStatus and transitionCSVState), verbatim.
	MessageExpectedDeploymentBad  = "calculated deployment install is bad"
	MessageAPIServicesNotReady    = "apiServices not installed"
	MessageWebhooksNotReady       = "webhooks not installed"
	MessageNeedsCertRotation      = "CSV owns resources that require a cert refresh"
	MessageFailedNeedsCertRefresh = "owned APIServices need cert refresh"
	messageAPIServiceFailedFormat = "APIService install failed: %s"
	messageWebhookFailedFormat    = "Webhook install failed: %s"
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

	// What the strategy makes besides its deployments, for a CSV that serves webhooks or
	// owns API services, read where OLM reads it (Installing, Succeeded, Failed). The zero
	// values say all is there, which is what the offline preview assumes.
	//
	// APIServicesMissing: an owned APIService does not exist, is not Available, or its API is
	// not served; APIServicesErr: they could not be checked.
	APIServicesMissing bool
	APIServicesErr     error
	// WebhooksMissing: a webhook configuration of the CSV (or a CRD's conversion webhook) is
	// missing or out of date; WebhooksErr: they could not be checked.
	WebhooksMissing bool
	WebhooksErr     error
	// ExpectedErr: the deployments OLM expects cannot be computed, because a serving
	// certificate's Secret or the CA of a webhook or API service is missing.
	ExpectedErr error
	// CertResourcesErr: an owned API service's Service, Secret, RBAC or CA hashes are not
	// what OLM made (OLM's checkAPIServiceResources); CertResourcesUnadoptable: its
	// APIService belongs to another owner, which a reinstall does not fix.
	CertResourcesErr         error
	CertResourcesUnadoptable bool
	// RotateCerts: a serving certificate is missing, invalid or due for rotation.
	RotateCerts bool
	// APIServiceOwnerConflict: an owned APIService exists that the CSV may not adopt.
	APIServiceOwnerConflict bool
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
		if err := install.ConversionProblem(csv); err != nil {
			// OLM finds it while it installs, and the install fails with it.
			t := AfterInstall(err)
			return Decision{Transition: &t}
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
	switch webhooks := install.ValidateWebhooks(csv); {
	case !f.Requirements.Met:
		d.Transition = ifChanged(csv, transition(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotFound))
	case webhooks != nil:
		d.Transition = ifChanged(csv, transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInvalidWebhookDescription, webhooks.Error()))
	case f.OwnerConflict:
		d.Transition = ifChanged(csv, transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonOwnerConflict, MessageOwnerConflict))
	case f.APIServiceOwnerConflict:
		d.Transition = ifChanged(csv, transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonOwnerConflict, install.ErrAPIServiceOwnerConflict.Error()))
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
	if f.ExpectedErr != nil {
		return to(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsReinstall, MessageExpectedDeploymentBad)
	}
	d := installStatus(csv, f, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
	if !f.waiting() || d.Transition != nil && d.Transition.Phase != v1alpha1.CSVPhaseInstalling {
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
	d.Wait = f.waitReason()
	return d
}

// waitReason says what an Installing CSV waits for, in installStatus's order.
func (f Facts) waitReason() string {
	switch {
	case f.APIServicesErr != nil:
		return f.APIServicesErr.Error()
	case f.APIServicesMissing:
		return MessageAPIServicesNotReady
	case f.WebhooksErr != nil:
		return f.WebhooksErr.Error()
	case f.WebhooksMissing:
		return MessageWebhooksNotReady
	case f.Installed != nil:
		return f.Installed.Message
	}
	return ""
}

// waiting reports whether anything the strategy makes is not there or not ready.
func (f Facts) waiting() bool {
	return f.Installed != nil || f.APIServicesMissing || f.APIServicesErr != nil || f.WebhooksMissing || f.WebhooksErr != nil
}

func succeeded(csv *v1alpha1.ClusterServiceVersion, f Facts) Decision {
	if f.ReplacedBy != nil {
		t := transition(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced, fmt.Sprintf(messageBeingReplacedFormat, f.ReplacedBy.Name))
		return Decision{Transition: &t, CountUpgrade: true}
	}
	if f.Strategy != nil {
		return invalidStrategy(f.Strategy)
	}
	if f.CertResourcesErr != nil {
		return to(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonAPIServiceResourceIssue, f.CertResourcesErr.Error())
	}
	if f.RotateCerts {
		return to(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsCertRotation, MessageNeedsCertRotation)
	}
	if !f.Requirements.Met {
		t := transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsLost)
		return Decision{Transition: &t, Requirements: f.Requirements.Statuses, WriteRequirements: true}
	}
	if f.ExpectedErr != nil {
		return to(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsReinstall, MessageExpectedDeploymentBad)
	}
	return installStatus(csv, f, v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentUnhealthy)
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
	case csv.Status.Reason == v1alpha1.CSVReasonInvalidWebhookDescription && install.ValidateWebhooks(csv) != nil:
		return Decision{Wait: csv.Status.Message}
	case csv.Status.Reason == v1alpha1.CSVReasonComponentFailed && install.ConversionProblem(csv) != nil:
		return Decision{Wait: csv.Status.Message}
	}
	if !f.Requirements.Met {
		t := transition(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotMet)
		return Decision{Transition: &t, Requirements: f.Requirements.Statuses, WriteRequirements: true}
	}
	if f.CertResourcesErr != nil {
		if f.CertResourcesUnadoptable {
			// OLM cannot fix what another owner holds: the CSV stays Failed.
			return Decision{Wait: f.CertResourcesErr.Error()}
		}
		return to(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonAPIServiceResourcesNeedReinstall, f.CertResourcesErr.Error())
	}
	if f.RotateCerts {
		return to(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsCertRotation, MessageFailedNeedsCertRefresh)
	}
	if f.ExpectedErr != nil {
		return to(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsReinstall, MessageExpectedDeploymentBad)
	}
	return installStatus(csv, f, v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsReinstall)
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

// installStatus is OLM's updateInstallStatus: Succeeded when the deployments are healthy and
// the API services and webhooks installed; Failed/InstallCheckFailed past a progress
// deadline; Failed/APIServiceInstallFailed when the API services cannot be checked; the
// given phase and reason while an API service or a webhook is missing ("apiServices not
// installed", "webhooks not installed"), InstallReady when the webhooks cannot be checked;
// back to InstallReady (with the given reason) when the deployments must be rewritten; else
// the given phase and reason with "installing: ...". Nothing changes when the CSV already
// says so.
func installStatus(csv *v1alpha1.ClusterServiceVersion, f Facts, phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason) Decision {
	installed := f.Installed
	var t groups.Transition
	switch {
	case !f.waiting():
		t = transition(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded)
	case installed != nil && installed.Unrecoverable():
		t = transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInstallCheckFailed, fmt.Sprintf(messageInstallCheckFmt, installed.Message))
	case f.APIServicesErr != nil:
		t = transition(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonAPIServiceInstallFailed, fmt.Sprintf(messageAPIServiceFailedFormat, f.APIServicesErr))
	case f.APIServicesMissing:
		t = transition(phase, reason, MessageAPIServicesNotReady)
	case f.WebhooksErr != nil:
		t = transition(v1alpha1.CSVPhaseInstallReady, reason, fmt.Sprintf(messageWebhookFailedFormat, f.WebhooksErr))
	case f.WebhooksMissing:
		t = transition(phase, reason, MessageWebhooksNotReady)
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
