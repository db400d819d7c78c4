package groups_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

func TestMembershipOf(t *testing.T) {
	tests := []struct {
		name            string
		groups          []operatorsv1.OperatorGroup
		wantGroup       string
		wantAnnotations map[string]string
		wantTargets     []string
		wantFailure     *groups.Transition
	}{
		{
			name:   "no group in the namespace (one elsewhere)",
			groups: []operatorsv1.OperatorGroup{og("elsewhere", "g", global())},
			wantFailure: &groups.Transition{
				Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonNoOperatorGroup,
				Message: "csv in namespace with no operatorgroups",
			},
		},
		{
			name:   "two groups in the namespace",
			groups: []operatorsv1.OperatorGroup{og("ops", "a", global()), og("ops", "b", targets("ops"))},
			wantFailure: &groups.Transition{
				Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonTooManyOperatorGroups,
				Message: "csv created in namespace with multiple operatorgroups, can't pick one automatically",
			},
		},
		{
			name:      "global group",
			groups:    []operatorsv1.OperatorGroup{og("ops", "global", global()), og("other", "x", targets("other"))},
			wantGroup: "global",
			wantAnnotations: map[string]string{
				"olm.operatorGroup":          "global",
				"olm.operatorNamespace":      "ops",
				"olm.operatorGroupNamespace": "ops",
				"olm.targetNamespaces":       "",
			},
			wantTargets: []string{""},
		},
		{
			name:      "explicit targets are sorted and comma-joined",
			groups:    []operatorsv1.OperatorGroup{og("ops", "tenants", targets("zeta", "alpha", "ops"))},
			wantGroup: "tenants",
			wantAnnotations: map[string]string{
				"olm.operatorGroup":          "tenants",
				"olm.operatorNamespace":      "ops",
				"olm.operatorGroupNamespace": "ops",
				"olm.targetNamespaces":       "alpha,ops,zeta",
			},
			wantTargets: []string{"alpha", "ops", "zeta"},
		},
		{
			name:      "a group that selects no namespace",
			groups:    []operatorsv1.OperatorGroup{og("ops", "picky", matchLabels("env", "none"))},
			wantGroup: "picky",
			wantAnnotations: map[string]string{
				"olm.operatorGroup":          "picky",
				"olm.operatorNamespace":      "ops",
				"olm.operatorGroupNamespace": "ops",
			},
			wantFailure: &groups.Transition{
				Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonNoTargetNamespaces,
				Message: "no targetNamespaces are matched operatorgroups namespace selection",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := groups.MembershipOf(csv("ops", "op.v1"), tt.groups)
			gotGroup := ""
			if m.Group != nil {
				gotGroup = m.Group.Name
			}
			if gotGroup != tt.wantGroup {
				t.Errorf("group = %q, want %q", gotGroup, tt.wantGroup)
			}
			if diff := cmp.Diff(tt.wantAnnotations, m.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTargets, m.Targets); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFailure, m.Failure); diff != "" {
				t.Errorf("failure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMembershipAnnotationsDiffer(t *testing.T) {
	m := groups.MembershipOf(csv("ops", "c"), []operatorsv1.OperatorGroup{og("ops", "g", targets("a"))})
	tests := []struct {
		name string
		csv  *v1alpha1.ClusterServiceVersion
		want bool
	}{
		{"none yet", csv("ops", "c"), true},
		{"all present", csv("ops", "c", annotations("olm.operatorGroup", "g", "olm.operatorNamespace", "ops", "olm.operatorGroupNamespace", "ops", "olm.targetNamespaces", "a", "other", "kept")), false},
		{"seed's key missing", csv("ops", "c", annotations("olm.operatorGroup", "g", "olm.operatorNamespace", "ops", "olm.targetNamespaces", "a")), true},
		{"stale targets", csv("ops", "c", annotations("olm.operatorGroup", "g", "olm.operatorNamespace", "ops", "olm.operatorGroupNamespace", "ops", "olm.targetNamespaces", "a,b")), true},
	}
	for _, tt := range tests {
		if got := m.AnnotationsDiffer(tt.csv); got != tt.want {
			t.Errorf("%s: AnnotationsDiffer = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRecovery(t *testing.T) {
	pending := func(msg string) *groups.Transition {
		return &groups.Transition{Phase: v1alpha1.CSVPhasePending, Reason: v1alpha1.CSVReasonRequirementsUnknown, Message: msg}
	}
	tests := []struct {
		phase  v1alpha1.ClusterServiceVersionPhase
		reason v1alpha1.ConditionReason
		want   *groups.Transition
	}{
		{v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonNoOperatorGroup, pending("InstallModes now support target namespaces")},
		{v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonTooManyOperatorGroups, pending("InstallModes now support target namespaces")},
		{v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonNoTargetNamespaces, pending("InstallModes now support target namespaces")},
		{v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonUnsupportedOperatorGroup, pending("InstallModes now support target namespaces")},
		{v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, pending("OperatorGroup no longer intersecting with conflicting owner")},
		{v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, pending("static OperatorGroup and intersecting groups now support providedAPIs")},
		{v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailed, nil},
		{v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInvalidInstallModes, nil},
		{v1alpha1.CSVPhasePending, v1alpha1.CSVReasonNoOperatorGroup, nil},
	}
	for _, tt := range tests {
		got := groups.Recovery(csv("ops", "c", status(tt.phase, tt.reason)))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Recovery(%s/%s) (-want +got):\n%s", tt.phase, tt.reason, diff)
		}
	}
}
