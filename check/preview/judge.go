package preview

import (
	"cmp"
	"fmt"
	"slices"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/phase"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/report"
)

// reasonRequiresApproval is the outcome of a CSV whose InstallPlan waits for a person.
const reasonRequiresApproval = "RequiresApproval"

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
	// The cluster's version is known only from a cluster state; without it the
	// requirement is not judged (a CSV's other requirements are what its bundle brings).
	if kubeVersion != "" {
		if met, statuses := phase.MinKubeVersion(csv, kubeVersion); !met {
			out.Phase, out.Reason = string(v1alpha1.CSVPhasePending), string(v1alpha1.CSVReasonRequirementsNotMet)
			out.Message = phase.MessageRequirementsNotFound + ": " + statuses[0].Message
			return out
		}
	}
	out.Phase, out.Reason, out.Message = string(v1alpha1.CSVPhaseSucceeded), string(v1alpha1.CSVReasonInstallSuccessful), phase.MessageInstallSucceeded
	return out
}

// planFor is the InstallPlan the Subscription controller makes for the Subscription's next
// CSV: the namespace's resolution cut into one plan per Subscription (plans.Split), each
// approved as plans.DecideApproval says — the controller's own functions. A CSV that passes
// every check but whose plan waits for a person has the outcome RequiresApproval.
func (p *clusterPreview) planFor(sp *report.SubscriptionPreview, sub *v1alpha1.Subscription, sr *resolve.SubscriptionResult, res *resolve.Result) {
	r := sr.Resolution
	if r.Status != resolve.StatusResolved || r.Next == "" {
		return
	}
	want := map[string]bool{}
	for _, s := range res.Subscriptions {
		want[s.Name] = s.Resolution.Status == resolve.StatusResolved
	}
	part := plans.Split(res, want)[sr.Name]
	if part == nil {
		return
	}
	plan, err := resolve.NewPlan(part)
	if err != nil || plan == nil {
		return
	}
	a := plans.DecideApproval(sub, sr)
	pp := &report.PreviewPlan{CSVNames: slices.Sorted(slices.Values(plan.CSVNames)), Approval: string(a.Approval), Approved: a.Approved, Why: a.Why}
	switch {
	case crdRefused(sp.Brings):
		pp.Phase = string(v1alpha1.InstallPlanPhaseFailed)
	case a.Approved:
		pp.Phase = string(v1alpha1.InstallPlanPhaseComplete)
	default:
		pp.Phase = string(v1alpha1.InstallPlanPhaseRequiresApproval)
		if sp.Outcome != nil && !sp.Outcome.Failed() {
			sp.Outcome = &report.PreviewOutcome{CSV: r.Next, Phase: reasonRequiresApproval, Reason: reasonRequiresApproval,
				Message: fmt.Sprintf("the InstallPlan for %s %s", r.Next, a.Why)}
		}
	}
	sp.Plan = pp
}

// crdRefused reports whether OLM's CRD upgrade check refuses a CRD the bundle changes.
func crdRefused(b *report.PreviewBrings) bool {
	if b == nil {
		return false
	}
	return slices.ContainsFunc(b.CRDs, func(c report.PreviewCRD) bool {
		return c.Change == report.CRDChanged && c.Verdict != "" && c.Verdict != report.CRDUpgradeSafe
	})
}
