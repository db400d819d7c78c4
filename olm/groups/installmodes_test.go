package groups_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

const (
	own    = v1alpha1.InstallModeTypeOwnNamespace
	single = v1alpha1.InstallModeTypeSingleNamespace
	multi  = v1alpha1.InstallModeTypeMultiNamespace
	all    = v1alpha1.InstallModeTypeAllNamespaces
)

func modeSet(t *testing.T, types ...v1alpha1.InstallModeType) groups.InstallModeSet {
	t.Helper()
	set, err := groups.NewInstallModeSet(csv("ops", "c", supports(types...)).Spec.InstallModes)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestSupports follows olm-behaviour 4.5 for every kind of target set, with OLM's messages.
func TestSupports(t *testing.T) {
	tests := []struct {
		name     string
		modes    []v1alpha1.InstallModeType
		targets  []string
		wantMode v1alpha1.InstallModeType
		wantMsg  string // "" means supported
	}{
		{name: "no targets", modes: allModes, targets: []string{}, wantMsg: "operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces"},
		{name: "nil targets", modes: allModes, targets: nil, wantMsg: "operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces"},
		{name: "own namespace supported", modes: []v1alpha1.InstallModeType{own}, targets: []string{"ops"}},
		{name: "own namespace unsupported", modes: []v1alpha1.InstallModeType{single, multi, all}, targets: []string{"ops"}, wantMode: own, wantMsg: "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace"},
		{name: "all namespaces supported", modes: []v1alpha1.InstallModeType{all}, targets: []string{""}},
		{name: "all namespaces unsupported", modes: []v1alpha1.InstallModeType{own, single, multi}, targets: []string{""}, wantMode: all, wantMsg: "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"},
		{name: "single other namespace supported", modes: []v1alpha1.InstallModeType{single}, targets: []string{"apps"}},
		{name: "single other namespace unsupported", modes: []v1alpha1.InstallModeType{own, multi, all}, targets: []string{"apps"}, wantMode: single, wantMsg: "SingleNamespace InstallModeType not supported, cannot configure to watch one namespace"},
		{name: "multi supported", modes: []v1alpha1.InstallModeType{multi}, targets: []string{"a", "b"}},
		{name: "multi unsupported, count in message", modes: []v1alpha1.InstallModeType{own, single, all}, targets: []string{"a", "b", "c"}, wantMode: multi, wantMsg: "MultiNamespace InstallModeType not supported, cannot configure to watch 3 namespaces"},
		{name: "multi with own needs OwnNamespace too", modes: []v1alpha1.InstallModeType{multi}, targets: []string{"a", "ops"}, wantMode: own, wantMsg: "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace"},
		{name: "multi with own, both supported", modes: []v1alpha1.InstallModeType{multi, own}, targets: []string{"a", "ops"}},
		{name: "all namespaces among others", modes: allModes, targets: []string{"a", ""}, wantMsg: "operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1"},
		{name: "all namespaces among others without multi", modes: []v1alpha1.InstallModeType{all}, targets: []string{"", "a"}, wantMode: multi, wantMsg: "MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces"},
		// No mode implies another (the seed mentions inference; OLM's code has none).
		{name: "AllNamespaces does not imply OwnNamespace", modes: []v1alpha1.InstallModeType{all}, targets: []string{"ops"}, wantMode: own, wantMsg: "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace"},
		{name: "MultiNamespace does not imply SingleNamespace", modes: []v1alpha1.InstallModeType{multi}, targets: []string{"apps"}, wantMode: single, wantMsg: "SingleNamespace InstallModeType not supported, cannot configure to watch one namespace"},
		{name: "SingleNamespace does not imply OwnNamespace", modes: []v1alpha1.InstallModeType{single}, targets: []string{"ops"}, wantMode: own, wantMsg: "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := modeSet(t, tt.modes...).Supports("ops", tt.targets)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Supports = %v, want supported", err)
				}
				return
			}
			var e *groups.UnsupportedTargetsError
			if !errors.As(err, &e) {
				t.Fatalf("Supports = %v, want *UnsupportedTargetsError", err)
			}
			if e.Error() != tt.wantMsg || e.Mode != tt.wantMode {
				t.Errorf("Supports = (%q, mode %q), want (%q, mode %q)", e.Error(), e.Mode, tt.wantMsg, tt.wantMode)
			}
		})
	}
}

func TestMissingModesAreUnsupported(t *testing.T) {
	// A CSV that lists only AllNamespaces: the other three are missing, hence unsupported.
	set, err := groups.NewInstallModeSet([]v1alpha1.InstallMode{{Type: all, Supported: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, targets := range [][]string{{"ops"}, {"apps"}, {"a", "b"}} {
		if err := set.Supports("ops", targets); err == nil {
			t.Errorf("Supports(%q) = nil, want unsupported", targets)
		}
	}
	if err := set.Supports("ops", []string{""}); err != nil {
		t.Errorf("Supports(all) = %v", err)
	}
	// No install modes at all: nothing is supported.
	if err := (groups.InstallModeSet{}).Supports("ops", []string{""}); err == nil {
		t.Error("an empty set supports all namespaces")
	}
}

func TestNewInstallModeSetDuplicates(t *testing.T) {
	modes := []v1alpha1.InstallMode{{Type: own, Supported: true}, {Type: all, Supported: true}, {Type: own, Supported: false}}
	_, err := groups.NewInstallModeSet(modes)
	var e *groups.InvalidInstallModesError
	if !errors.As(err, &e) {
		t.Fatalf("NewInstallModeSet = %v, want *InvalidInstallModesError", err)
	}
	want := "InstallMode list contains duplicates, cannot make set: [{OwnNamespace true} {AllNamespaces true} {OwnNamespace false}]"
	if err.Error() != want {
		t.Errorf("message = %q, want OLM's %q", err.Error(), want)
	}
	// Agreeing duplicates are duplicates too.
	if _, err := groups.NewInstallModeSet([]v1alpha1.InstallMode{{Type: all, Supported: true}, {Type: all, Supported: true}}); err == nil {
		t.Error("two identical entries make a set")
	}
}

func TestCheckInstallModes(t *testing.T) {
	tests := []struct {
		name    string
		csv     *v1alpha1.ClusterServiceVersion
		targets []string
		want    *groups.Transition
	}{
		{name: "supported", csv: csv("ops", "c", supports(all)), targets: []string{""}},
		{
			name: "duplicates fail InvalidInstallModes", targets: []string{""},
			csv: csv("ops", "c", installModes(v1alpha1.InstallMode{Type: all, Supported: true}, v1alpha1.InstallMode{Type: all, Supported: false})),
			want: &groups.Transition{
				Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonInvalidInstallModes,
				Message: "InstallMode list contains duplicates, cannot make set: [{AllNamespaces true} {AllNamespaces false}]",
			},
		},
		{
			name: "unsupported fails UnsupportedOperatorGroup", targets: []string{"ops"},
			csv: csv("ops", "c", supports(all)),
			want: &groups.Transition{
				Phase: v1alpha1.CSVPhaseFailed, Reason: v1alpha1.CSVReasonUnsupportedOperatorGroup,
				Message: "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, groups.CheckInstallModes(tt.csv, tt.targets)); diff != "" {
				t.Errorf("CheckInstallModes (-want +got):\n%s", diff)
			}
		})
	}
}
