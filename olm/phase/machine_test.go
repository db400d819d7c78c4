package phase

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// csvIn is a CSV named name in phase with reason and message, its phase begun at since.
func csvIn(phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason, message string, since time.Time) *v1alpha1.ClusterServiceVersion {
	c := &v1alpha1.ClusterServiceVersion{}
	c.Namespace, c.Name = "ns", "etcd.v0.9.2"
	c.Status.Phase, c.Status.Reason, c.Status.Message = phase, reason, message
	if !since.IsZero() {
		c.Status.LastTransitionTime = &metav1.Time{Time: since}
	}
	return c
}

func named(name string, phase v1alpha1.ClusterServiceVersionPhase) *v1alpha1.ClusterServiceVersion {
	c := csvIn(phase, "", "", time.Time{})
	c.Name = name
	return c
}

func failForwardGroup() groups.Evaluation {
	og := &operatorsv1.OperatorGroup{}
	og.Spec.UpgradeStrategy = operatorsv1.UpgradeStrategyUnsafeFailForward
	return groups.Evaluation{Membership: groups.Membership{Group: og}}
}

var met = Requirements{Met: true}

func tr(phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason, message string) *groups.Transition {
	return &groups.Transition{Phase: phase, Reason: reason, Message: message}
}

func TestNext(t *testing.T) {
	notMet := Requirements{Statuses: []v1alpha1.RequirementStatus{{Kind: "CustomResourceDefinition", Name: "etcdclusters.etcd.database.coreos.com", Status: v1alpha1.RequirementStatusReasonNotPresent}}}
	waiting := &install.StrategyError{Reason: install.ReasonWaiting, Message: "waiting for deployment etcd-operator to become ready: 0 of 1 updated replicas are available"}
	missing := &install.StrategyError{Reason: install.ReasonComponentMissing, Message: "deployment etcd-operator not found"}
	updated := &install.StrategyError{Reason: install.ReasonDeploymentUpdated, Message: "deployment changed old hash=a, new hash=b"}
	timeout := &install.StrategyError{Reason: install.ReasonTimeout, Message: "deployment etcd-operator exceeded its progress deadline"}
	conflict := groups.Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, Message: groups.MessageInterOperatorGroupConflict}
	noGroup := groups.Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonNoOperatorGroup, Message: groups.MessageNoOperatorGroup}
	badStrategy := errors.New("unsupported install strategy")

	tests := []struct {
		name string
		csv  *v1alpha1.ClusterServiceVersion
		f    Facts
		want Decision
	}{
		{
			name: "a copied csv is left alone",
			csv:  csvIn(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonCopied, "", time.Time{}),
			f:    Facts{Groups: groups.Evaluation{Skipped: "copied"}, Installed: missing},
			want: Decision{},
		},
		{
			name: "a group failure comes first, and deletes deployments on a conflict",
			csv:  csvIn(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded, now),
			f:    Facts{Groups: groups.Evaluation{Transition: &conflict, DeleteDeployments: true}, Requirements: met},
			want: Decision{Transition: &conflict, DeleteDeployments: true},
		},
		{
			name: "a conflict is written once: the deployments are not deleted again",
			csv:  csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, groups.MessageInterOperatorGroupConflict, now),
			f:    Facts{Groups: groups.Evaluation{Transition: &conflict, DeleteDeployments: true}},
			want: Decision{},
		},
		{
			name: "the same group failure again changes nothing",
			csv:  csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonNoOperatorGroup, groups.MessageNoOperatorGroup, now),
			f:    Facts{Groups: groups.Evaluation{Transition: &noGroup}},
			want: Decision{},
		},
		{
			name: "None goes to Pending",
			csv:  csvIn(v1alpha1.CSVPhaseNone, "", "", time.Time{}),
			want: Decision{Transition: tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked)},
		},
		{
			name: "Pending with requirements not met stays Pending and writes them",
			csv:  csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, now),
			f:    Facts{Requirements: notMet},
			want: Decision{
				Transition:   tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotFound),
				Requirements: notMet.Statuses, WriteRequirements: true,
			},
		},
		{
			name: "Pending and still not met: only the requirements are written",
			csv:  csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotFound, now),
			f:    Facts{Requirements: notMet},
			want: Decision{Requirements: notMet.Statuses, WriteRequirements: true},
		},
		{
			name: "Pending with an owner conflict fails",
			csv:  csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, now),
			f:    Facts{Requirements: met, OwnerConflict: true},
			want: Decision{
				Transition:        tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonOwnerConflict, MessageOwnerConflict),
				WriteRequirements: true,
			},
		},
		{
			name: "Pending waits for the csv it replaces to be Replacing",
			csv:  csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, now),
			f:    Facts{Requirements: met, Replaces: named("etcd.v0.9.0", v1alpha1.CSVPhaseSucceeded)},
			want: Decision{WriteRequirements: true, Wait: `waiting for etcd.v0.9.0, which this csv replaces, to be Replacing (it is "Succeeded")`},
		},
		{
			name: "Pending with everything met goes to InstallReady",
			csv:  csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, now),
			f:    Facts{Requirements: met, Replaces: named("etcd.v0.9.0", v1alpha1.CSVPhaseReplacing)},
			want: Decision{
				Transition:        tr(v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVReasonRequirementsMet, MessageAllRequirementsMet),
				WriteRequirements: true,
			},
		},
		{
			name: "Pending behind a replaced operator that is not upgradeable stays Pending with OLM's reason, before anything else",
			csv:  csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, now),
			f: Facts{Strategy: badStrategy, Requirements: notMet, Replaces: named("etcd.v0.9.0", v1alpha1.CSVPhaseReplacing),
				ReplacesNotUpgradeable: &NotUpgradeableError{Message: "the operator is not upgradeable: migrating"}},
			want: Decision{
				// OLM operator.go:2237: "operator is not upgradeable: %s" around isOperatorUpgradeable's error.
				Transition: tr(v1alpha1.CSVPhasePending, "OperatorConditionNotUpgradeable", "operator is not upgradeable: the operator is not upgradeable: migrating"),
				Wait:       "operator is not upgradeable: the operator is not upgradeable: migrating",
			},
		},
		{
			name: "Pending and still not upgradeable: nothing is written again",
			csv:  csvIn(v1alpha1.CSVPhasePending, "OperatorConditionNotUpgradeable", "operator is not upgradeable: the operator is not upgradeable: migrating", now),
			f: Facts{Requirements: met, Replaces: named("etcd.v0.9.0", v1alpha1.CSVPhaseReplacing),
				ReplacesNotUpgradeable: &NotUpgradeableError{Message: "the operator is not upgradeable: migrating"}},
			want: Decision{Wait: "operator is not upgradeable: the operator is not upgradeable: migrating"},
		},
		{
			name: "Pending once the replaced operator is upgradeable again goes to InstallReady",
			csv:  csvIn(v1alpha1.CSVPhasePending, "OperatorConditionNotUpgradeable", "operator is not upgradeable: the operator is not upgradeable: migrating", now),
			f:    Facts{Requirements: met, Replaces: named("etcd.v0.9.0", v1alpha1.CSVPhaseReplacing)},
			want: Decision{
				Transition:        tr(v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVReasonRequirementsMet, MessageAllRequirementsMet),
				WriteRequirements: true,
			},
		},
		{
			name: "Pending with an invalid strategy fails",
			csv:  csvIn(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, MessageRequirementsNotChecked, now),
			f:    Facts{Strategy: badStrategy, Requirements: met},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInvalidStrategy, "install strategy invalid: unsupported install strategy")},
		},
		{
			name: "InstallReady installs",
			csv:  csvIn(v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVReasonRequirementsMet, MessageAllRequirementsMet, now),
			f:    Facts{Requirements: met},
			want: Decision{Install: true},
		},
		{
			name: "Installing waits for the deployments and looks again at the timeout",
			csv:  csvIn(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting, "installing: "+waiting.Message, now.Add(-time.Minute)),
			f:    Facts{Now: now, Requirements: met, Installed: waiting},
			want: Decision{Wait: waiting.Message, RequeueAfter: InstallTimeout - time.Minute},
		},
		{
			name: "Installing fails after the install timeout",
			csv:  csvIn(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting, "installing: "+waiting.Message, now.Add(-InstallTimeout)),
			f:    Facts{Now: now, Requirements: met, Installed: waiting},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInstallCheckFailed, MessageInstallTimeout)},
		},
		{
			name: "Installing succeeds when the deployments are ready",
			csv:  csvIn(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonInstallSuccessful, MessageInstallWaiting, now),
			f:    Facts{Now: now, Requirements: met},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded)},
		},
		{
			name: "Installing with a deployment past its deadline fails",
			csv:  csvIn(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting, "installing: "+waiting.Message, now),
			f:    Facts{Now: now, Requirements: met, Installed: timeout},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInstallCheckFailed, "install failed: "+timeout.Message)},
		},
		{
			name: "Succeeded and replaced by another csv goes Replacing and counts an upgrade",
			csv:  csvIn(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded, now),
			f:    Facts{Requirements: met, ReplacedBy: named("etcd.v0.9.4", v1alpha1.CSVPhasePending)},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced, "being replaced by csv: etcd.v0.9.4"), CountUpgrade: true},
		},
		{
			name: "Succeeded losing a requirement fails",
			csv:  csvIn(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded, now),
			f:    Facts{Requirements: notMet},
			want: Decision{
				Transition:   tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsLost),
				Requirements: notMet.Statuses, WriteRequirements: true,
			},
		},
		{
			name: "Succeeded losing a deployment fails as unhealthy",
			csv:  csvIn(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded, now),
			f:    Facts{Requirements: met, Installed: missing},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentUnhealthy, "installing: "+missing.Message)},
		},
		{
			name: "Succeeded with a changed deployment goes back to InstallReady",
			csv:  csvIn(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded, now),
			f:    Facts{Requirements: met, Installed: updated},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseInstallReady, v1alpha1.CSVReasonComponentUnhealthy, "installing: "+updated.Message)},
		},
		{
			name: "Succeeded and healthy stays",
			csv:  csvIn(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, MessageInstallSucceeded, now),
			f:    Facts{Requirements: met},
			want: Decision{},
		},
		{
			name: "Failed by a group recovers to Pending once the group checks pass",
			csv:  csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, groups.MessageInterOperatorGroupConflict, now),
			f:    Facts{Requirements: met},
			want: Decision{Transition: tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, groups.MessageRecoveredIntersection)},
		},
		{
			name: "Failed with the same invalid strategy waits instead of looping",
			csv:  csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInvalidStrategy, "install strategy invalid: unsupported install strategy", now),
			f:    Facts{Strategy: badStrategy, Requirements: met},
			want: Decision{Wait: badStrategy.Error()},
		},
		{
			name: "Failed with an owner conflict still there waits",
			csv:  csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonOwnerConflict, MessageOwnerConflict, now),
			f:    Facts{Requirements: met, OwnerConflict: true},
			want: Decision{Wait: MessageOwnerConflict},
		},
		{
			name: "Failed with requirements not met goes back to Pending",
			csv:  csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsLost, now),
			f:    Facts{Requirements: notMet},
			want: Decision{
				Transition:   tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsNotMet, MessageRequirementsNotMet),
				Requirements: notMet.Statuses, WriteRequirements: true,
			},
		},
		{
			name: "Failed with a deployment missing needs a reinstall",
			csv:  csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentUnhealthy, "installing: "+missing.Message, now),
			f:    Facts{Requirements: met, Installed: missing},
			want: Decision{Transition: tr(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNeedsReinstall, "installing: "+missing.Message)},
		},
		{
			name: "Failed and replaced in a fail-forward group goes Replacing",
			csv:  csvIn(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailed, "install strategy failed: x", now),
			f:    Facts{Groups: failForwardGroup(), ReplacedBy: named("etcd.v0.9.4", v1alpha1.CSVPhasePending)},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced, "Fail Forward is enabled, allowing Failed csv to be replaced by csv: etcd.v0.9.4"), CountUpgrade: true},
		},
		{
			name: "Replacing waits while it replaces an older csv itself",
			csv:  csvIn(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced, "being replaced by csv: etcd.v0.9.4", now),
			f:    Facts{Replaces: named("etcd.v0.9.0", v1alpha1.CSVPhaseReplacing), ReplacedBy: named("etcd.v0.9.4", v1alpha1.CSVPhaseSucceeded)},
			want: Decision{Wait: "replaces etcd.v0.9.0, which goes first"},
		},
		{
			name: "Replacing goes Deleting once its replacement succeeded",
			csv:  csvIn(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced, "being replaced by csv: etcd.v0.9.4", now),
			f:    Facts{ReplacedBy: named("etcd.v0.9.4", v1alpha1.CSVPhaseSucceeded)},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseDeleting, v1alpha1.CSVReasonReplaced, MessageReplaced)},
		},
		{
			name: "Replacing waits for its replacement",
			csv:  csvIn(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced, "being replaced by csv: etcd.v0.9.4", now),
			f:    Facts{ReplacedBy: named("etcd.v0.9.4", v1alpha1.CSVPhaseInstalling)},
			want: Decision{Wait: `waiting for etcd.v0.9.4, which replaces this csv, to succeed (it is "Installing")`},
		},
		{
			name: "Replacing in a fail-forward group follows the newest replacement",
			csv:  csvIn(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced, "x", now),
			f: Facts{
				Groups:            failForwardGroup(),
				ReplacedBy:        named("etcd.v0.9.4", v1alpha1.CSVPhaseFailed),
				NewestReplacement: named("etcd.v0.9.5", v1alpha1.CSVPhaseSucceeded),
			},
			want: Decision{Transition: tr(v1alpha1.CSVPhaseDeleting, v1alpha1.CSVReasonReplaced, MessageReplaced)},
		},
		{
			name: "Replacing without a replacement is a sync error",
			csv:  csvIn(v1alpha1.CSVPhaseReplacing, v1alpha1.CSVReasonBeingReplaced, "x", now),
			want: Decision{Err: ErrNoReplacement},
		},
		{
			name: "Deleting deletes",
			csv:  csvIn(v1alpha1.CSVPhaseDeleting, v1alpha1.CSVReasonReplaced, MessageReplaced, now),
			want: Decision{Delete: true},
		},
		{
			name: "an unknown phase waits and says so",
			csv:  csvIn("Dancing", "", "", now),
			want: Decision{Wait: `unknown phase "Dancing"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Next(tt.csv, tt.f)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
				t.Errorf("Next (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAfterInstall(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want groups.Transition
	}{
		{"success", nil, *tr(v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonInstallSuccessful, MessageInstallWaiting)},
		{"retried", errors.New("conflict"), *tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailed, "install strategy failed: conflict")},
		{
			"not retried",
			&install.StrategyError{Reason: install.ReasonInsufficientPermissions, Message: "forbidden"},
			*tr(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailedNoRetry, "install strategy failed: forbidden"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, AfterInstall(tt.err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
