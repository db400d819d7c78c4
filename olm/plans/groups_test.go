package plans

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/olm/resolve"
)

// TestOperatorGroupsFailure holds OLM's literal (pkg/controller/registry/resolver/
// step_resolver.go line 111: "expected 1 OperatorGroup in the namespace, found %d").
func TestOperatorGroupsFailure(t *testing.T) {
	tests := []struct {
		groups int
		want   *resolve.Resolution
	}{
		{0, &resolve.Resolution{Status: resolve.StatusFailed, Reason: "ErrorPreventedResolution", Message: "expected 1 OperatorGroup in the namespace, found 0"}},
		{1, nil},
		{2, &resolve.Resolution{Status: resolve.StatusFailed, Reason: "ErrorPreventedResolution", Message: "expected 1 OperatorGroup in the namespace, found 2"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, OperatorGroupsFailure(tt.groups)); diff != "" {
			t.Errorf("%d groups (-want +got):\n%s", tt.groups, diff)
		}
	}
}
