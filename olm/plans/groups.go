package plans

import (
	"fmt"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/resolve"
)

// MessageOperatorGroups is OLM's message when a namespace does not hold exactly one
// OperatorGroup (resolver/step_resolver.go). OLM's catalog operator stops there and writes
// nothing on the Subscriptions; olmsync writes it as ResolutionFailed, so the reason
// nothing is installed is on the object.
const MessageOperatorGroups = "expected 1 OperatorGroup in the namespace, found %d"

// OperatorGroupsFailure is the resolution of every Subscription of a namespace that holds
// groups OperatorGroups: nil when it holds exactly one (resolution goes on), else Failed
// with ErrorPreventedResolution and OLM's message. Neither OLM nor olmsync resolves such a
// namespace, so no InstallPlan and no CSV come of it.
func OperatorGroupsFailure(groups int) *resolve.Resolution {
	if groups == 1 {
		return nil
	}
	return &resolve.Resolution{
		Status: resolve.StatusFailed, Reason: v1alpha1.ErrorPreventedResolution,
		Message: fmt.Sprintf(MessageOperatorGroups, groups),
	}
}
