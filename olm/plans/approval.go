package plans

import (
	"fmt"
	"slices"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/resolve"
)

// Annotations on a Subscription that let olmsync approve its InstallPlans declaratively,
// where OLM users write Jobs that approve plans today.
const (
	// PinnedCSVAnnotation names the CSV a Subscription may reach and not pass: olmsync
	// approves each InstallPlan whose CSV is on the channel's path up to it, and no plan
	// after it. Without an installed CSV and a startingCSV, the pinned CSV is installed
	// first (it acts as the startingCSV), so the first install does not overshoot the pin.
	PinnedCSVAnnotation = "olmsync.dev/pinned-csv"
	// ApprovalAnnotation with the value ApprovalFirstAutomatic installs the first CSV
	// without approval and requires approval for every upgrade after it.
	ApprovalAnnotation     = "olmsync.dev/approval"
	ApprovalFirstAutomatic = "first-automatic"
)

// Approval is how an InstallPlan made for one Subscription is approved.
type Approval struct {
	// Approval is the plan's spec.approval. It is Manual whenever olmsync decides on the
	// Subscription's behalf, so that nothing approves it but that decision.
	Approval v1alpha1.Approval
	// Approved is the plan's spec.approved.
	Approved bool
	// Why says who approved it, or why it waits; the reconciler puts it in an Event.
	Why string
}

// DecideApproval decides the approval of the InstallPlan a Subscription's resolution
// calls for. In OLM, one Manual Subscription makes every plan of its namespace Manual;
// in olmsync each plan holds one Subscription's resolution (Split), so its own
// installPlanApproval decides, unless an annotation above does.
func DecideApproval(sub *v1alpha1.Subscription, r *resolve.SubscriptionResult) Approval {
	next := r.Resolution.Next
	if pin := sub.Annotations[PinnedCSVAnnotation]; pin != "" {
		if slices.Contains(r.Resolution.Path, pin) {
			return Approval{v1alpha1.ApprovalManual, true, fmt.Sprintf("approved by olmsync: %s is on the path to the pinned %s", next, pin)}
		}
		return Approval{v1alpha1.ApprovalManual, false, fmt.Sprintf("waits for approval: %s is past the pinned %s (%s)", next, pin, PinnedCSVAnnotation)}
	}
	if sub.Annotations[ApprovalAnnotation] == ApprovalFirstAutomatic {
		if r.Installed == "" && sub.Status.InstalledCSV == "" {
			return Approval{v1alpha1.ApprovalManual, true, fmt.Sprintf("approved by olmsync: %s is the first install (%s: %s)", next, ApprovalAnnotation, ApprovalFirstAutomatic)}
		}
		return Approval{v1alpha1.ApprovalManual, false, fmt.Sprintf("waits for approval: upgrades after the first install need it (%s: %s)", ApprovalAnnotation, ApprovalFirstAutomatic)}
	}
	if sub.InstallPlanApproval() == v1alpha1.ApprovalManual {
		return Approval{v1alpha1.ApprovalManual, false, "waits for approval: installPlanApproval is Manual"}
	}
	return Approval{v1alpha1.ApprovalAutomatic, true, "approved: installPlanApproval is Automatic"}
}

// ForResolver returns the Subscription as the resolver should see it: a pinned CSV stands
// in for startingCSV while nothing is installed and no startingCSV is given.
func ForResolver(sub *v1alpha1.Subscription) *v1alpha1.Subscription {
	pin := sub.Annotations[PinnedCSVAnnotation]
	if pin == "" || sub.Spec.StartingCSV != "" || sub.Status.InstalledCSV != "" {
		return sub
	}
	out := sub.DeepCopy()
	out.Spec.StartingCSV = pin
	return out
}
