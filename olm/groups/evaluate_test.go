package groups_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name            string
		csv             *v1alpha1.ClusterServiceVersion
		groups          []operatorsv1.OperatorGroup
		wantSkip        groups.Skip
		wantTransition  *groups.Transition
		wantSteps       []groups.APIReconciliation
		wantGroupAPIs   string
		wantGroupChange bool
		wantDelete      bool
	}{
		{
			name:   "no group",
			csv:    csv("ops", "c", etcdCluster, everyMode),
			groups: []operatorsv1.OperatorGroup{og("apps", "g", global())},
			wantTransition: &groups.Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonNoOperatorGroup,
				Message: "csv in namespace with no operatorgroups"},
		},
		{
			name: "duplicate install modes come before support",
			csv: csv("ops", "c", etcdCluster, installModes(
				v1alpha1.InstallMode{Type: own, Supported: false}, v1alpha1.InstallMode{Type: own, Supported: false})),
			groups: []operatorsv1.OperatorGroup{og("ops", "g", targets("ops"))},
			wantTransition: &groups.Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonInvalidInstallModes,
				Message: "InstallMode list contains duplicates, cannot make set: [{OwnNamespace false} {OwnNamespace false}]"},
		},
		{
			name:   "install modes do not support the targets",
			csv:    csv("ops", "c", etcdCluster, supports(own, single)),
			groups: []operatorsv1.OperatorGroup{og("ops", "g", global())},
			wantTransition: &groups.Transition{Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonUnsupportedOperatorGroup,
				Message: "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"},
		},
		{
			name:            "first member: APIs added, then no conflict",
			csv:             csv("ops", "c", etcdCluster, everyMode),
			groups:          []operatorsv1.OperatorGroup{og("ops", "g", targets("ops"), provides(otherAPI))},
			wantSteps:       []groups.APIReconciliation{groups.AddAPIs, groups.NoAPIConflict},
			wantGroupAPIs:   etcdAPI + "," + otherAPI,
			wantGroupChange: true,
		},
		{
			name:          "already listed: no conflict at once",
			csv:           csv("ops", "c", etcdCluster, everyMode),
			groups:        []operatorsv1.OperatorGroup{og("ops", "g", targets("ops"), provides(etcdAPI))},
			wantSteps:     []groups.APIReconciliation{groups.NoAPIConflict},
			wantGroupAPIs: etcdAPI,
		},
		{
			name: "both groups claim it: removed from the CSV's group, then the CSV conflicts",
			csv:  csv("ops", "c", etcdCluster, everyMode),
			groups: []operatorsv1.OperatorGroup{
				og("ops", "g", targets("ops"), provides(etcdAPI)),
				og("operators", "global", global(), provides(etcdAPI)),
			},
			wantSteps:       []groups.APIReconciliation{groups.RemoveAPIs, groups.APIConflict},
			wantTransition:  conflictTransition,
			wantGroupAPIs:   "",
			wantGroupChange: true,
			wantDelete:      true,
		},
		{
			name:           "a static group that does not list the CSV's APIs",
			csv:            csv("ops", "c", etcdCluster, everyMode),
			groups:         []operatorsv1.OperatorGroup{og("ops", "g", targets("ops"), static(), provides(otherAPI))},
			wantSteps:      []groups.APIReconciliation{groups.AddAPIs},
			wantTransition: staticTransition,
			wantGroupAPIs:  otherAPI,
			wantDelete:     true,
		},
		{
			name:     "a copied CSV is skipped",
			csv:      csv("apps", "c", etcdCluster, status(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonCopied)),
			groups:   []operatorsv1.OperatorGroup{og("apps", "g", targets("apps"))},
			wantSkip: groups.SkipCopied,
		},
		{
			name:     "a CSV failed without retry is skipped",
			csv:      csv("ops", "c", etcdCluster, status(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailedNoRetry)),
			groups:   []operatorsv1.OperatorGroup{og("ops", "g", targets("ops"))},
			wantSkip: groups.SkipNoRetry,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := groups.Evaluate(tt.csv, tt.groups)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Skipped != tt.wantSkip {
				t.Errorf("Skipped = %q, want %q", ev.Skipped, tt.wantSkip)
			}
			if diff := cmp.Diff(tt.wantTransition, ev.Transition); diff != "" {
				t.Errorf("transition (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSteps, ev.Steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if ev.GroupProvidedAPIs != tt.wantGroupAPIs || ev.GroupAnnotationChanged != tt.wantGroupChange {
				t.Errorf("group APIs = %q (changed %v), want %q (changed %v)", ev.GroupProvidedAPIs, ev.GroupAnnotationChanged, tt.wantGroupAPIs, tt.wantGroupChange)
			}
			if ev.DeleteDeployments != tt.wantDelete {
				t.Errorf("DeleteDeployments = %v, want %v", ev.DeleteDeployments, tt.wantDelete)
			}
		})
	}
}

func TestEvaluateDoesNotChangeItsInput(t *testing.T) {
	gs := []operatorsv1.OperatorGroup{og("ops", "g", targets("ops"), provides(otherAPI))}
	c := csv("ops", "c", etcdCluster, everyMode)
	if _, err := groups.Evaluate(c, gs); err != nil {
		t.Fatal(err)
	}
	if got := gs[0].Annotations["olm.providedAPIs"]; got != otherAPI {
		t.Errorf("Evaluate changed the group's annotation to %q", got)
	}
	if len(c.Annotations) != 0 {
		t.Errorf("Evaluate annotated the CSV: %v", c.Annotations)
	}
}

func TestEvaluateBadCRDName(t *testing.T) {
	_, err := groups.Evaluate(csv("ops", "c", ownsCRD("nodots", "v1", "X"), everyMode),
		[]operatorsv1.OperatorGroup{og("ops", "g", targets("ops"))})
	var e *groups.InvalidCRDNameError
	if !errors.As(err, &e) || e.CRDName != "nodots" {
		t.Fatalf("Evaluate = %v, want *InvalidCRDNameError for nodots", err)
	}
}
