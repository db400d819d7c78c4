package preview

import (
	"cmp"
	"maps"
	"slices"
	"time"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/phase"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/report"
)

// maxRounds bounds the resolutions settle makes: one per CSV of the longest upgrade path,
// and a few more; a catalog cannot make it loop (each round installs a CSV of a higher
// version), but a bound keeps a mistake from hanging check.
const maxRounds = 32

// maxPhaseSyncs bounds the CSV syncs of one round: each CSV takes at most a handful of
// phases (None, Pending, InstallReady, Installing, Succeeded, Replacing, Deleting).
const maxPhaseSyncs = 16

// world is the cluster as settle plays it forward: every CSV with its phase, every
// Subscription with its status, every group with its olm.providedAPIs.
type world struct {
	v      *view
	csvs   []v1alpha1.ClusterServiceVersion
	subs   []v1alpha1.Subscription
	groups []operatorsv1.OperatorGroup
	// brought are every CSV the world has held: their CRDs stay on the cluster after them.
	brought []*v1alpha1.ClusterServiceVersion
	// waiting are the Subscriptions (namespace/name) whose InstallPlan waits for a person.
	waiting map[string]bool
	// unknown are the Subscriptions whose plan brings a bundle the catalog lists without
	// its content: what it installs is not known, so settle stops there.
	unknown map[string]bool
	// stuck are the plans (by Subscription) that stay Installing.
	stuck map[string]*report.PreviewPlanState
	ends  map[string]*report.PreviewEnd
}

// settle plays the controllers forward from the first resolution (results) to where they
// stop, with the decision core they use: each round resolves every namespace
// (resolve.Resolver), creates the approved plans' CSVs (plans.Split, plans.DecideApproval)
// and moves every CSV through OLM's phase machine (phase.Next over groups.Evaluate and
// phase.APIRequirements) until no phase changes. A CSV that does not succeed is not
// replaced: the path stops there, and what OLM then does (resolve again with the CSV it
// was to replace still in the namespace) is what the next round finds. It returns where
// each Subscription ends, by namespace/name.
func settle(r *resolve.Resolver, v *view, results map[string]*resolve.Result) map[string]*report.PreviewEnd {
	w := &world{v: v, waiting: map[string]bool{}, unknown: map[string]bool{}, stuck: map[string]*report.PreviewPlanState{}, ends: map[string]*report.PreviewEnd{}}
	for i := range v.csvs {
		if !groups.IsCopied(&v.csvs[i]) {
			w.csvs = append(w.csvs, *v.csvs[i].DeepCopy())
		}
		w.brought = append(w.brought, v.csvs[i].DeepCopy())
	}
	for _, e := range v.subscriptions {
		w.subs = append(w.subs, *e.sub.DeepCopy())
	}
	for _, g := range v.groups {
		w.groups = append(w.groups, *g.og.DeepCopy())
	}
	namespaces := slices.Sorted(maps.Keys(results))
	for round := range maxRounds {
		w.syncPhases()
		added := false
		for _, ns := range namespaces {
			res := results[ns]
			if round > 0 {
				res = w.resolve(r, ns)
			}
			added = w.apply(ns, res) || added
		}
		if !added {
			break
		}
	}
	w.syncPhases()
	for i := range w.subs {
		s := &w.subs[i]
		end := w.ends[s.Namespace+"/"+s.Name]
		if end == nil || w.unknown[s.Namespace+"/"+s.Name] {
			delete(w.ends, s.Namespace+"/"+s.Name)
			continue
		}
		end.CurrentCSV, end.InstalledCSV = s.Status.CurrentCSV, s.Status.InstalledCSV
		if c := w.csv(s.Namespace, s.Status.InstalledCSV); c != nil && c.Status.Phase != "" {
			end.Outcome = &report.PreviewOutcome{CSV: c.Name, Phase: string(c.Status.Phase), Reason: string(c.Status.Reason), Message: c.Status.Message}
		}
	}
	return w.ends
}

// resolve resolves one namespace of the world, as the Subscription controller does.
func (w *world) resolve(r *resolve.Resolver, ns string) *resolve.Result {
	in := resolve.Namespace{Name: ns, ExcludeGlobalCatalogs: excludesGlobalCatalogs(w.v, ns), FailForward: failsForward(w.v, ns)}
	for i := range w.csvs {
		if w.csvs[i].Namespace == ns {
			in.CSVs = append(in.CSVs, w.csvs[i])
		}
	}
	for i := range w.subs {
		if w.subs[i].Namespace == ns {
			in.Subscriptions = append(in.Subscriptions, *plans.ForResolver(&w.subs[i]))
		}
	}
	res := r.Resolve(in)
	if f := plans.OperatorGroupsFailure(len(w.v.groupsOf(ns))); f != nil {
		failAll(res, *f)
	}
	return res
}

// apply records one namespace's resolution on its Subscriptions and creates the CSVs of
// the approved plans; it reports whether it created any.
func (w *world) apply(ns string, res *resolve.Result) bool {
	want := map[string]bool{}
	for _, sr := range res.Subscriptions {
		key := ns + "/" + sr.Name
		want[sr.Name] = sr.Resolution.Status == resolve.StatusResolved && !w.waiting[key] && !w.unknown[key]
	}
	parts := plans.Split(res, want)
	added := false
	for _, sr := range res.Subscriptions {
		key := ns + "/" + sr.Name
		sub := w.subscription(ns, sr.Name)
		if sub == nil || w.unknown[key] {
			continue
		}
		end := w.ends[key]
		if end == nil {
			end = &report.PreviewEnd{}
			w.ends[key] = end
		}
		r := sr.Resolution
		switch {
		case r.Status == resolve.StatusFailed && (r.Reason == resolve.ReasonConstraintsNotSatisfiable || r.Reason == resolve.ReasonErrorPreventedResolution):
			end.Reason, end.Message = r.Reason, r.Message
			continue
		case r.Status != resolve.StatusResolved || r.Next == "":
			end.Reason, end.Message = "", ""
			continue
		}
		end.Reason, end.Message = "", ""
		if w.waiting[key] {
			continue // its plan still waits; the resolution failing (above) is all that changes
		}
		sub.Status.CurrentCSV = r.Next
		if !plans.DecideApproval(sub, &sr).Approved {
			w.waiting[key] = true
			continue
		}
		part := parts[sr.Name]
		if part == nil {
			// The CSV is in the namespace already: the Subscription takes it.
			sub.Status.InstalledCSV = r.Next
			continue
		}
		for _, b := range part.Bundles {
			if b.Content == nil {
				w.unknown[key] = true
				break
			}
		}
		if w.unknown[key] {
			continue
		}
		// The InstallPlan controller executes the plan up to the first step it cannot
		// (view.execute): the CSVs after it are not created, and the plan stays Installing.
		created := w.executed(ns, part)
		if stuck := w.stuck[key]; stuck != nil {
			// It never completes: the Subscription waits on it, as on a plan awaiting approval.
			w.waiting[key] = true
			end.Plan = stuck
		}
		for _, b := range part.Bundles {
			if !created[b.Name] || w.csv(ns, b.Name) != nil {
				continue
			}
			c := csvFromBundle(b.Content, ns)
			c.Spec.Replaces = b.Replaces
			w.csvs = append(w.csvs, *c)
			w.brought = append(w.brought, c.DeepCopy())
			added = true
		}
		if !created[r.Next] {
			continue
		}
		sub.Status.InstalledCSV = r.Next
		// sub points into w.subs: not used after this append
		for _, g := range part.Generated {
			if w.subscription(ns, g.Name) == nil {
				g := *g.DeepCopy()
				g.Status.CurrentCSV, g.Status.InstalledCSV = g.Spec.StartingCSV, g.Spec.StartingCSV
				w.subs = append(w.subs, g)
			}
		}
	}
	return added
}

// syncPhases moves every CSV through OLM's phase machine until none changes: what the CSV
// controller does, with every deployment available (the preview cannot see a pod fail).
func (w *world) syncPhases() {
	now := time.Unix(0, 0)
	for range maxPhaseSyncs {
		changed := false
		slices.SortFunc(w.csvs, func(a, b v1alpha1.ClusterServiceVersion) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		for i := 0; i < len(w.csvs); i++ {
			c := &w.csvs[i]
			moved, deleted := advance(c, w.facts(c, now))
			if deleted {
				w.csvs = slices.Delete(w.csvs, i, i+1)
				i--
			}
			changed = changed || moved || deleted
		}
		if !changed {
			return
		}
	}
}

// advance is one sync of the CSV controller on c, as the preview plays it: OLM's phase
// machine (phase.Next) decides, the install strategy goes through (every deployment
// becomes available: the preview cannot see a pod fail). It reports whether c's status
// changed, or whether the controller deletes c.
func advance(c *v1alpha1.ClusterServiceVersion, f phase.Facts) (changed, deleted bool) {
	d := phase.Next(c, f)
	if d.Install {
		t := phase.AfterInstall(nil)
		d.Transition = &t
	}
	if d.Delete {
		return false, true
	}
	if t := d.Transition; t != nil && phase.Changes(c, *t) {
		c.Status.Phase, c.Status.Reason, c.Status.Message = t.Phase, t.Reason, t.Message
		return true, false
	}
	return false, false
}

// facts is what the phase machine knows of a CSV of the world.
func (w *world) facts(c *v1alpha1.ClusterServiceVersion, now time.Time) phase.Facts {
	f := phase.Facts{Now: now}
	ev, err := groups.Evaluate(c, w.groups)
	if err != nil {
		f.Strategy = err
		return f
	}
	if ev.GroupAnnotationChanged {
		applyGroupAPIs(w.groups, ev)
	}
	f.Groups = ev
	f.Strategy = strategyProblem(c)
	rep := phase.ReplacementOf(c, w.csvs)
	f.Replaces, f.ReplacedBy, f.NewestReplacement = rep.Replaces, rep.ReplacedBy, rep.Newest
	f.OwnerConflict = len(phase.OwnerConflicts(c, w.csvs)) > 0
	f.Requirements = requirements(c, w.v.kubeVersion, crdsOnCluster(w.v.state, w.brought...), w.csvs)
	return f
}

func (w *world) csv(ns, name string) *v1alpha1.ClusterServiceVersion {
	for i := range w.csvs {
		if w.csvs[i].Namespace == ns && w.csvs[i].Name == name {
			return &w.csvs[i]
		}
	}
	return nil
}

func (w *world) subscription(ns, name string) *v1alpha1.Subscription {
	for i := range w.subs {
		if w.subs[i].Namespace == ns && w.subs[i].Name == name {
			return &w.subs[i]
		}
	}
	return nil
}

// executed is the set of CSVs the InstallPlan controller creates of an approved plan: those
// whose step comes before the first step it cannot execute (view.execute); every one when
// it executes the whole plan. A plan that stops is recorded in w.stuck for its
// Subscriptions.
func (w *world) executed(ns string, part *resolve.Result) map[string]bool {
	created := map[string]bool{}
	steps, err := planSteps(ns, part)
	if err != nil {
		for _, b := range part.Bundles {
			created[b.Name] = true
		}
		return created
	}
	x := w.v.execute(ns, steps)
	stop := x.stopsAt(len(steps))
	for i, s := range steps {
		if i < stop && s.Resource.Kind == v1alpha1.ClusterServiceVersionKind {
			created[s.Resource.Name] = true
		}
	}
	if stop < len(steps) {
		pp := &report.PreviewPlanState{Phase: string(v1alpha1.InstallPlanPhaseInstalling), Message: x.message, InstallCheckFailed: x.checkFailed}
		for _, sr := range part.Subscriptions {
			w.stuck[ns+"/"+sr.Name] = pp
		}
	}
	return created
}
