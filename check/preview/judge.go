package preview

import (
	"cmp"
	"fmt"
	"slices"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/report"
)

// OLM's messages for the outcomes the preview predicts beyond the OperatorGroup checks
// (olm-behaviour 3.2 and 3.3).
const (
	messageInstallSucceeded   = "install strategy completed with no errors"
	messageRequirementsNotMet = "one or more requirements couldn't be found"
	reasonRequiresApproval    = "RequiresApproval"
)

// judged is a CSV the cluster would run once the revision is applied.
type judged struct {
	csv       *v1alpha1.ClusterServiceVersion
	installed bool // on the cluster already (or installed by the base revision)
	outcome   *report.PreviewOutcome
}

func csvKey(ns, name string) string { return ns + "/" + name }

// judge runs OLM's OperatorGroup checks (groups.Evaluate) on every CSV the cluster would
// run: those installed that nothing replaces, then the new ones resolution brings, each
// group's olm.providedAPIs growing as its members settle, in that order — the CSVs
// already running were there first. It returns each CSV's outcome by namespace/name, and
// the groups as they settle.
func judge(v *view, results map[string]*resolve.Result) (map[string]*judged, []operatorsv1.OperatorGroup) {
	replaced := map[string]bool{}
	var fresh []*judged
	for ns, res := range results {
		for _, b := range res.Bundles {
			if b.Replaces != "" {
				replaced[csvKey(ns, b.Replaces)] = true
			}
			if b.Content != nil {
				fresh = append(fresh, &judged{csv: csvFromBundle(b.Content, ns)})
			}
		}
	}
	var items []*judged
	for i := range v.csvs {
		c := &v.csvs[i]
		if !replaced[csvKey(c.Namespace, c.Name)] && !groups.IsCopied(c) {
			items = append(items, &judged{csv: c.DeepCopy(), installed: true})
		}
	}
	byName := func(a, b *judged) int {
		return cmp.Or(cmp.Compare(a.csv.Namespace, b.csv.Namespace), cmp.Compare(a.csv.Name, b.csv.Name))
	}
	slices.SortFunc(items, byName)
	slices.SortFunc(fresh, byName)
	items = append(items, fresh...)

	settled := make([]operatorsv1.OperatorGroup, len(v.groups))
	for i, g := range v.groups {
		settled[i] = *g.og.DeepCopy()
	}
	out := make(map[string]*judged, len(items))
	for _, it := range items {
		it.outcome = evaluate(it.csv, settled, v.kubeVersion)
		out[csvKey(it.csv.Namespace, it.csv.Name)] = it
	}
	return out, settled
}

// evaluate is the outcome of one CSV; a CSV that passes the OperatorGroup checks writes
// its APIs into its group (settled), as OLM does before it goes on.
func evaluate(csv *v1alpha1.ClusterServiceVersion, settled []operatorsv1.OperatorGroup, kubeVersion string) *report.PreviewOutcome {
	out := &report.PreviewOutcome{CSV: csv.Name}
	ev, err := groups.Evaluate(csv, settled)
	switch {
	case err != nil:
		out.Phase, out.Reason, out.Message = string(v1alpha1.CSVPhaseFailed), string(v1alpha1.CSVReasonInvalidStrategy), err.Error()
		return out
	case ev.Skipped != "":
		return nil
	}
	// OLM writes the group's olm.providedAPIs as the checks settle, also on the way to a
	// failure (a RemoveAPIs step before the conflict).
	if ev.GroupAnnotationChanged {
		for i := range settled {
			g := &settled[i]
			if g.Namespace == ev.Membership.Group.Namespace && g.Name == ev.Membership.Group.Name {
				if g.Annotations == nil {
					g.Annotations = map[string]string{}
				}
				g.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey] = ev.GroupProvidedAPIs
			}
		}
	}
	if t := ev.Transition; t != nil {
		out.Phase, out.Reason, out.Message = string(t.Phase), string(t.Reason), t.Message
		return out
	}
	if msg := kubeVersionUnmet(csv, kubeVersion); msg != "" {
		out.Phase, out.Reason = string(v1alpha1.CSVPhasePending), string(v1alpha1.CSVReasonRequirementsNotMet)
		out.Message = messageRequirementsNotMet + ": " + msg
		return out
	}
	out.Phase, out.Reason, out.Message = string(v1alpha1.CSVPhaseSucceeded), string(v1alpha1.CSVReasonInstallSuccessful), messageInstallSucceeded
	return out
}

// kubeVersionUnmet is OLM's requirement message when the CSV's minKubeVersion is above the
// cluster's version; "" when it is met or either is unknown.
func kubeVersionUnmet(csv *v1alpha1.ClusterServiceVersion, kubeVersion string) string {
	if csv.Spec.MinKubeVersion == "" || kubeVersion == "" {
		return ""
	}
	want, err1 := catalog.ParseVersion(csv.Spec.MinKubeVersion)
	have, err2 := catalog.ParseVersion(kubeVersion)
	if err1 != nil || err2 != nil || !want.GT(have) {
		return ""
	}
	return fmt.Sprintf("CSV version requirement not met: minKubeVersion (%s) > server version (%s)", csv.Spec.MinKubeVersion, kubeVersion)
}

// approvalOutcome is the outcome of a CSV that passes every check but waits for a person:
// OLM makes every InstallPlan of a namespace Manual when any of its Subscriptions is
// (resolve.Plan.Approval).
func approvalOutcome(csv string, res *resolve.Result) *report.PreviewOutcome {
	for _, s := range res.Subscriptions {
		if s.Approval == v1alpha1.ApprovalManual {
			msg := fmt.Sprintf("the InstallPlan for %s waits for approval (Subscription %s is installPlanApproval: Manual)", csv, s.Name)
			return &report.PreviewOutcome{CSV: csv, Phase: reasonRequiresApproval, Reason: reasonRequiresApproval, Message: msg}
		}
	}
	return nil
}
