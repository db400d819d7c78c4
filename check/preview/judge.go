package preview

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/install"
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

// judge runs OLM's OperatorGroup checks (groups.Evaluate) and the requirements the preview
// can decide (phase.APIRequirements) on every CSV the cluster would run: those installed
// that nothing replaces, then the new ones resolution brings whose InstallPlan is approved
// (approved, by namespace/name), each group's olm.providedAPIs growing as its members
// settle, in that order — the CSVs already running were there first. A new CSV whose plan
// waits for a person is not installed: it is judged last, as if its plan were approved
// alone, and neither its APIs nor its CRDs count for the others. It returns each CSV's
// outcome by namespace/name, and the groups as they settle.
func judge(v *view, results map[string]*resolve.Result, approved map[string]bool) (map[string]*judged, []operatorsv1.OperatorGroup) {
	replaced := map[string]bool{}
	var fresh, waiting []*judged
	for ns, res := range results {
		for _, b := range res.Bundles {
			if b.Replaces != "" && approved[csvKey(ns, b.Name)] {
				replaced[csvKey(ns, b.Replaces)] = true
			}
			if b.Content == nil {
				continue
			}
			j := &judged{csv: csvFromBundle(b.Content, ns)}
			if approved[csvKey(ns, b.Name)] {
				fresh = append(fresh, j)
			} else {
				waiting = append(waiting, j)
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
	slices.SortFunc(waiting, byName)
	items = append(items, fresh...)

	// The CRDs on the cluster once the approved plans ran: the cluster's, those of every
	// installed CSV (and of the ones replaced: a CRD outlives its CSV), and those the
	// approved plans apply.
	var present []*v1alpha1.ClusterServiceVersion
	for i := range v.csvs {
		present = append(present, &v.csvs[i])
	}
	for _, it := range fresh {
		present = append(present, it.csv)
	}
	crds := crdsOnCluster(v.state, present...)

	settled := make([]operatorsv1.OperatorGroup, len(v.groups))
	for i, g := range v.groups {
		settled[i] = *g.og.DeepCopy()
	}
	out := make(map[string]*judged, len(items)+len(waiting))
	for _, it := range items {
		it.outcome = evaluate(it.csv, settled, v.kubeVersion, crds)
		out[csvKey(it.csv.Namespace, it.csv.Name)] = it
	}
	for _, it := range waiting {
		hypothetical := make([]operatorsv1.OperatorGroup, len(settled))
		for i := range settled {
			settled[i].DeepCopyInto(&hypothetical[i])
		}
		it.outcome = evaluate(it.csv, hypothetical, v.kubeVersion, crdsOnCluster(v.state, append(slices.Clone(present), it.csv)...))
		out[csvKey(it.csv.Namespace, it.csv.Name)] = it
	}
	return out, settled
}

// approvedBundles names (namespace/name) the bundles of the resolution whose InstallPlan is
// approved: the namespace's resolution cut into one plan per Subscription (plans.Split),
// each approved as plans.DecideApproval says — the Subscription controller's own decisions.
func approvedBundles(v *view, results map[string]*resolve.Result) map[string]bool {
	out := map[string]bool{}
	for ns, res := range results {
		want := map[string]bool{}
		for _, s := range res.Subscriptions {
			want[s.Name] = s.Resolution.Status == resolve.StatusResolved
		}
		for name, part := range plans.Split(res, want) {
			sub, sr := v.subscription(ns, name), res.Subscription(name)
			if sub == nil || sr == nil || !plans.DecideApproval(sub, sr).Approved {
				continue
			}
			for _, b := range part.Bundles {
				out[csvKey(ns, b.Name)] = true
			}
		}
	}
	return out
}

// crdsOnCluster are the CRDs the requirement check finds: the cluster state's, and one for
// each CRD the given CSVs own (their InstallPlans applied it), serving the versions the
// owners describe. Every one is Established: the API server accepts a CRD at once.
func crdsOnCluster(state *ClusterState, csvs ...*v1alpha1.ClusterServiceVersion) map[string]*apiextensionsv1.CustomResourceDefinition {
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	established := []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue},
	}
	serve := func(name, version string) {
		crd := out[name]
		if crd == nil {
			crd = &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
			crd.Status.Conditions = established
			out[name] = crd
		}
		if !slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == version }) {
			crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: version, Served: true})
		}
	}
	if state != nil {
		for i := range state.CRDs {
			for _, ver := range state.CRDs[i].Spec.Versions {
				if ver.Served {
					serve(state.CRDs[i].Name, ver.Name)
				}
			}
		}
	}
	for _, c := range csvs {
		for _, d := range c.Spec.CustomResourceDefinitions.Owned {
			serve(d.Name, d.Version)
		}
	}
	return out
}

// evaluate is the outcome of one CSV, judged alone: the CSV controller's syncs (advance,
// phase.Next) on it until its phase stops changing, with the groups as they settled so
// far and the CRDs on the cluster. A CSV that passes the OperatorGroup checks writes its
// APIs into its group (settled), as OLM does before it goes on. A CSV the group checks
// skip (a copy) has no outcome.
func evaluate(csv *v1alpha1.ClusterServiceVersion, settled []operatorsv1.OperatorGroup, kubeVersion string, crds map[string]*apiextensionsv1.CustomResourceDefinition) *report.PreviewOutcome {
	c := csv.DeepCopy()
	var req phase.Requirements
	for range maxPhaseSyncs {
		f := phase.Facts{Now: time.Unix(0, 0)}
		ev, err := groups.Evaluate(c, settled)
		switch {
		case err != nil:
			f.Strategy = err
		case ev.Skipped != "":
			return nil
		default:
			// OLM writes the group's olm.providedAPIs as the checks settle, also on the way
			// to a failure (a RemoveAPIs step before the conflict).
			if ev.GroupAnnotationChanged {
				applyGroupAPIs(settled, ev)
			}
			f.Groups = ev
			f.Strategy = strategyProblem(c)
		}
		req = requirements(c, kubeVersion, crds, nil)
		f.Requirements = req
		if changed, _ := advance(c, f); !changed {
			break
		}
	}
	out := &report.PreviewOutcome{CSV: c.Name, Phase: string(c.Status.Phase), Reason: string(c.Status.Reason), Message: c.Status.Message}
	if c.Status.Reason == v1alpha1.CSVReasonRequirementsNotMet && !req.Met {
		// OLM lists the requirements in status.requirementStatus; the report says which.
		out.Message += ": " + unmet(req)
	}
	return out
}

// strategyProblem is why the CSV controller cannot execute the CSV's install strategy
// (install.Validate), as the CSV controller asks; nil for a CSV the preview knows only from
// the catalog's olm.csv.metadata, which carries no strategy.
func strategyProblem(c *v1alpha1.ClusterServiceVersion) error {
	if c.Spec.InstallStrategy.StrategyName == "" && len(c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs) == 0 {
		return nil
	}
	if err := install.Validate(c); err != nil {
		return err
	}
	return nil
}

// applyGroupAPIs writes the group's olm.providedAPIs as the evaluation settled it.
func applyGroupAPIs(settled []operatorsv1.OperatorGroup, ev groups.Evaluation) {
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

// requirements is the CSV controller's requirement check as far as the preview can make it
// (phase.APIRequirements). The cluster's version is known only from a cluster state;
// without it minKubeVersion is not judged.
func requirements(csv *v1alpha1.ClusterServiceVersion, kubeVersion string, crds map[string]*apiextensionsv1.CustomResourceDefinition, csvs []v1alpha1.ClusterServiceVersion) phase.Requirements {
	if kubeVersion == "" && csv.Spec.MinKubeVersion != "" {
		csv = csv.DeepCopy()
		csv.Spec.MinKubeVersion = ""
	}
	return phase.APIRequirements(csv, phase.Snapshot{ServerVersion: kubeVersion, CRDs: crds, CSVs: csvs})
}

// unmet says which requirement is not met: the first, with the object it names when that
// is not the CSV itself.
func unmet(req phase.Requirements) string {
	for _, s := range req.Statuses {
		if s.Status == v1alpha1.RequirementStatusReasonPresent {
			continue
		}
		if s.Kind == v1alpha1.ClusterServiceVersionKind {
			return s.Message
		}
		return fmt.Sprintf("%s %s: %s", s.Kind, s.Name, s.Message)
	}
	return ""
}

// planFor is the InstallPlan the Subscription controller makes for the Subscription's next
// CSV: the namespace's resolution cut into one plan per Subscription (plans.Split), each
// approved as plans.DecideApproval says — the controller's own functions. A CSV that passes
// every check but whose plan waits for a person has the outcome RequiresApproval. The
// InstallPlan controller's service-account query and, in a scoped install, the account's
// rights (view.execute) may hold the plan Installing.
func (p *clusterPreview) planFor(v *view, sp *report.SubscriptionPreview, sub *v1alpha1.Subscription, sr *resolve.SubscriptionResult, res *resolve.Result) {
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
	steps, err := planSteps(sr.Namespace, part)
	if err != nil {
		steps = plan.Steps
	}
	x := v.execute(sr.Namespace, steps)
	pp.InstallCheckFailed = x.checkFailed
	if stop := x.stopsAt(len(steps)); a.Approved && slices.IndexFunc(steps, func(s v1alpha1.Step) bool {
		return s.Resource.Kind == v1alpha1.ClusterServiceVersionKind && s.Resource.Name == r.Next
	}) >= stop {
		// The plan stops before the CSV is created: there is no CSV to have an outcome.
		sp.Outcome = nil
	}
	switch {
	case a.Approved && x.checkFailed != "":
		pp.Phase = string(v1alpha1.InstallPlanPhaseInstalling)
	case crdRefused(sp.Brings):
		pp.Phase = string(v1alpha1.InstallPlanPhaseFailed)
	case a.Approved && x.refused != nil:
		pp.Phase, pp.Message = string(v1alpha1.InstallPlanPhaseInstalling), x.message
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
