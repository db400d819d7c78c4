package preview

import (
	"fmt"
	"slices"

	"github.com/blang/semver/v4"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/report"
)

// Section is the preview of one revision, as it goes into the report: per cluster, each
// Subscription and OperatorGroup of Git. It is also what a later revision takes as its
// base (Options.Base).
type Section struct {
	clusters []*clusterPreview
}

var _ check.Section = (*Section)(nil)

// AddTo adds the preview's lists to the report.
func (s *Section) AddTo(r *report.Report) {
	for _, c := range s.clusters {
		r.Subscriptions = append(r.Subscriptions, c.subs...)
		r.OperatorGroups = append(r.OperatorGroups, c.groups...)
		r.ClusterExtensions = append(r.ClusterExtensions, c.exts...)
	}
}

// Subscriptions and OperatorGroups are the preview's entries, in cluster order.
func (s *Section) Subscriptions() []report.SubscriptionPreview {
	var out []report.SubscriptionPreview
	for _, c := range s.clusters {
		out = append(out, c.subs...)
	}
	return out
}

// extensionsOf is what the revision's ClusterExtensions of a cluster resolve to.
func (s *Section) extensionsOf(cluster string) []report.ClusterExtensionPreview {
	for _, c := range s.clusters {
		if c.name == cluster {
			return c.exts
		}
	}
	return nil
}

// runsOf is what a cluster runs once the revision is applied, by Subscription.
func (s *Section) runsOf(cluster string) map[string]*run {
	for _, c := range s.clusters {
		if c.name == cluster {
			return c.runs
		}
	}
	return nil
}

// report turns the resolution and the outcomes into the Subscriptions of the section and
// their violations. Only Subscriptions declared in Git are reported: the others are the
// cluster's, and count only for what they do to the namespace.
func (p *clusterPreview) report(v *view, results map[string]*resolve.Result, contents map[resolve.CatalogKey]*catalog.Catalog, outcomes map[string]*judged, ends map[string]*report.PreviewEnd) {
	reported := map[string]bool{} // installed CSVs reported on already
	p.groupRefs = map[string]*gitRef{}
	for _, g := range v.groups {
		if g.git != nil && p.groupRefs[g.og.Namespace] == nil {
			p.groupRefs[g.og.Namespace] = g.git
		}
	}
	for _, e := range v.subscriptions {
		res := results[e.sub.Namespace]
		sr := res.Subscription(e.sub.Name)
		if e.git == nil || sr == nil {
			continue
		}
		sp := report.SubscriptionPreview{
			Cluster: v.cluster, App: e.git.app, File: e.git.file, Line: e.git.line,
			Namespace: sr.Namespace, Name: sr.Name, Package: sr.Package, Channel: sr.Channel,
			Source: sr.Source.Name, SourceNamespace: sr.Source.Namespace, Approval: string(sr.Approval),
			Installed: sr.Installed,
		}
		if _, known := contents[sr.Source]; !known && !v.catalogSourceMissing(sr.Source) {
			sp.Resolution = report.PreviewResolution{Status: report.ResolutionUnknown, Message: fmt.Sprintf(
				"catalog %s was not given (--catalog, or catalogs in olmsync.yaml): nothing to resolve against", sr.Source)}
			p.subs = append(p.subs, sp)
			p.violate(e.git, RuleCatalogNotGiven, policy.SeverityWarning, fmt.Sprintf(
				"Subscription %s: the preview has no catalog %s; give it with --catalog %s/%s=SRC or in olmsync.yaml, or fix spec.source and spec.sourceNamespace",
				sp.ID(), sr.Source, sr.Source.Name, sr.Source.Namespace))
			continue
		}
		sp.Resolution = previewResolution(sr, contents)
		for _, d := range sr.Dependencies {
			pd := report.PreviewDependency{Name: d.Name, Package: d.Package, Channel: d.Channel,
				RequiredBy: d.RequiredBy, Requirement: d.Requirement, Installed: d.Installed}
			if d.Source != nil {
				pd.Source = d.Source.String()
			}
			sp.Dependencies = append(sp.Dependencies, pd)
		}
		p.judgeSubscription(&sp, e.git, sr, outcomes, reported)
		sp.Brings = p.brings(v, sr, contents)
		p.judgeCRDs(e.git, &sp)
		p.planFor(v, &sp, &e.sub, sr, res)
		p.judgeNext(e.git, &sp)
		sp.End = ends[sr.Namespace+"/"+sr.Name]
		if end := sp.End; end != nil && end.Reason != "" && sr.Resolution.Status != resolve.StatusFailed {
			// The first resolution went through; one after what it installed does not.
			p.violate(e.git, RuleResolutionFailed, policy.SeverityError, fmt.Sprintf(
				"Subscription %s stops on %s: its next resolution fails (%s): %s", sp.ID(), end.InstalledCSV, end.Reason, end.Message))
		}
		p.subs = append(p.subs, sp)
	}
	p.reportInstalled(v, outcomes, reported)
}

// previewResolution is the resolver's decision as the report writes it.
func previewResolution(sr *resolve.SubscriptionResult, contents map[resolve.CatalogKey]*catalog.Catalog) report.PreviewResolution {
	r := sr.Resolution
	out := report.PreviewResolution{
		Status: string(r.Status), Reason: r.Reason, Next: r.Next, Head: r.Head,
		Path: slices.Clone(r.Path), Message: r.Message,
	}
	if r.NextSource != nil && *r.NextSource != sr.Source {
		out.NextSource = r.NextSource.String()
	}
	if sr.Installed != "" && len(r.Path) > 0 {
		out.Skipped = skipped(contents[sr.Source], sr.Package, sr.Channel, sr.Installed, r.Path)
	}
	return out
}

// skipped are the channel's entries whose version lies between the installed CSV and the
// end of the path, and that the path does not install (skips, skipRange).
func skipped(c *catalog.Catalog, pkg, channel, installed string, path []string) []string {
	if c == nil {
		return nil
	}
	p := c.Package(pkg)
	if p == nil || p.Channel(channel) == nil {
		return nil
	}
	version := func(name string) (semver.Version, bool) {
		b := p.Bundle(name)
		return semverOf(b), b != nil && semverOf(b).String() != "0.0.0"
	}
	from, ok1 := version(installed)
	to, ok2 := version(lastOf(path))
	if !ok1 || !ok2 {
		return nil
	}
	type entry struct {
		name string
		v    semver.Version
	}
	var out []entry
	for _, e := range p.Channel(channel).Entries {
		v, ok := version(e.Name)
		if ok && v.GT(from) && v.LT(to) && !slices.Contains(path, e.Name) {
			out = append(out, entry{e.Name, v})
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return a.v.Compare(b.v) })
	names := make([]string, len(out))
	for i, e := range out {
		names[i] = e.name
	}
	return names
}

func semverOf(b *catalog.Bundle) semver.Version {
	if b == nil {
		return semver.Version{}
	}
	return b.Version
}

// judgeSubscription sets the Subscription's outcome and reports what would fail: a
// resolution failure (OLM001), a CSV that would fail (OLM002) or stay Pending (OLM004) —
// the one it installs or a dependency —, an upgrade that cannot happen (OLM005). The
// installed CSV's own outcome is OLM003's, reported once (reportInstalled).
func (p *clusterPreview) judgeSubscription(sp *report.SubscriptionPreview, at *gitRef, sr *resolve.SubscriptionResult,
	outcomes map[string]*judged, reported map[string]bool) {
	r := sr.Resolution
	switch {
	case r.Status == resolve.StatusFailed && (r.Reason == resolve.ReasonUpgradeHeld || r.Reason == resolve.ReasonNoUpgradePath):
		p.violate(at, RuleNoUpgrade, policy.SeverityWarning, fmt.Sprintf("Subscription %s stays on %s (%s): %s", sp.ID(), sr.Installed, r.Reason, r.Message))
	case r.Status == resolve.StatusFailed:
		p.violate(at, RuleResolutionFailed, policy.SeverityError, fmt.Sprintf("Subscription %s cannot be resolved (%s): %s", sp.ID(), r.Reason, r.Message))
	}
	if r.Status == resolve.StatusResolved && r.Next != "" {
		if j := outcomes[csvKey(sr.Namespace, r.Next)]; j != nil && j.outcome != nil {
			o := *j.outcome
			sp.Outcome = &o // judged once its InstallPlan is (judgeNext)
		}
		for _, d := range sr.Dependencies {
			if j := outcomes[csvKey(sr.Namespace, d.Name)]; !d.Installed && j != nil && j.outcome.Failed() {
				p.violateOutcome(at, sp, j.outcome, "its dependency ")
			}
		}
		return
	}
	if sr.Installed != "" {
		if j := outcomes[csvKey(sr.Namespace, sr.Installed)]; j != nil && j.outcome != nil {
			o := *j.outcome
			sp.Outcome = &o
			if o.Failed() && !reported[csvKey(sr.Namespace, sr.Installed)] {
				reported[csvKey(sr.Namespace, sr.Installed)] = true
				p.violate(installedLocation(p.viewGroupRef(sr.Namespace), at), RuleInstalledCSVFails, policy.SeverityError,
					installedMessage(sr.Namespace, &o))
			}
		}
	}
}

// judgeCRDs reports each CRD an upgrade changes that OLM's CRD upgrade check refuses
// (OLM007): the InstallPlan would fail and the operator stay where it is.
func (p *clusterPreview) judgeCRDs(at *gitRef, sp *report.SubscriptionPreview) {
	if at == nil || sp.Brings == nil {
		return
	}
	for _, c := range sp.Brings.CRDs {
		if c.Change != report.CRDChanged || c.Verdict == "" || c.Verdict == report.CRDUpgradeSafe {
			continue
		}
		p.violate(at, RuleCRDUpgradeRefused, policy.SeverityError,
			fmt.Sprintf("Subscription %s: the upgrade to %s replaces CRD %s, which OLM refuses: %s", sp.ID(), sp.Brings.CSV, c.Name, c.Verdict))
	}
}

// judgeNext reports what the cluster would show of the CSV the Subscription installs next:
// when its InstallPlan stays Installing because of the namespace's OperatorGroups (OLM's
// service-account query fails, InstallCheckFailed), the plan and its message — the CSV is
// never created, so it has no phase to fail with (OLM002); else the CSV's own failure
// (OLM002) or Pending (OLM004).
func (p *clusterPreview) judgeNext(at *gitRef, sp *report.SubscriptionPreview) {
	if pl := sp.Plan; pl != nil && pl.Phase == string(v1alpha1.InstallPlanPhaseInstalling) && pl.InstallCheckFailed != "" {
		next := sp.Resolution.Next
		p.violate(at, RuleCSVFails, policy.SeverityError, fmt.Sprintf(
			"Subscription %s: the InstallPlan for %s would stay Installing, its Installed condition False (InstallCheckFailed): %s; %s would not be created",
			sp.ID(), next, pl.InstallCheckFailed, next))
		return
	}
	if sp.Outcome != nil && sp.Outcome.CSV == sp.Resolution.Next {
		p.violateOutcome(at, sp, sp.Outcome, "")
	}
}

// violateOutcome reports a new CSV's failed outcome on its Subscription.
func (p *clusterPreview) violateOutcome(at *gitRef, sp *report.SubscriptionPreview, o *report.PreviewOutcome, what string) {
	switch {
	case o.Reason == reasonRequirementsNotMet:
		p.violate(at, RuleRequirementsNotMet, policy.SeverityError, fmt.Sprintf("Subscription %s: %s%s would stay %s (%s): %s", sp.ID(), what, o.CSV, o.Phase, o.Reason, o.Message))
	case o.Failed():
		p.violate(at, RuleCSVFails, policy.SeverityError, fmt.Sprintf("Subscription %s: %s%s would be %s (%s): %s", sp.ID(), what, o.CSV, o.Phase, o.Reason, o.Message))
	}
}

const reasonRequirementsNotMet = "RequirementsNotMet"

// reportInstalled reports installed CSVs that would fail and that no Subscription of Git
// accounts for (a Subscription only the cluster has, a CSV whose Subscription the change
// removes), on the namespace's OperatorGroup in Git when there is one.
func (p *clusterPreview) reportInstalled(_ *view, outcomes map[string]*judged, reported map[string]bool) {
	keys := make([]string, 0, len(outcomes))
	for k := range outcomes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		j := outcomes[k]
		if !j.installed || reported[k] || !j.outcome.Failed() {
			continue
		}
		at := p.groupRefs[j.csv.Namespace]
		if at == nil {
			continue // nothing in Git to point at, and nothing in Git caused it
		}
		reported[k] = true
		p.violate(at, RuleInstalledCSVFails, policy.SeverityError, installedMessage(j.csv.Namespace, j.outcome))
	}
}

func installedMessage(ns string, o *report.PreviewOutcome) string {
	return fmt.Sprintf("the installed %s in namespace %s would be %s (%s): %s", o.CSV, ns, o.Phase, o.Reason, o.Message)
}

// viewGroupRef is the namespace's OperatorGroup in Git, if any.
func (p *clusterPreview) viewGroupRef(ns string) *gitRef {
	return p.groupRefs[ns]
}

func installedLocation(group, sub *gitRef) *gitRef {
	if group != nil {
		return group
	}
	return sub
}

// violate records a violation of a preview rule on an object of Git.
func (p *clusterPreview) violate(at *gitRef, rule string, sev policy.Severity, msg string) {
	p.violations = append(p.violations, policy.Violation{
		Rule: rule, Severity: sev, Message: msg, Cluster: p.name,
		App: at.app, File: at.file, Line: at.line, Object: at.ref,
	})
}

// reportGroups lists the OperatorGroups of Git, and those of the cluster in a namespace a
// Subscription of Git is in, as they settle.
func (p *clusterPreview) reportGroups(v *view, settled []operatorsv1.OperatorGroup) {
	subNS := map[string]bool{}
	for _, s := range p.subs {
		subNS[s.Namespace] = true
	}
	for i, g := range v.groups {
		if g.git == nil && !subNS[g.og.Namespace] {
			continue
		}
		og := &settled[i]
		if g.serviceAccountMissing && g.git != nil {
			p.violate(g.git, RuleServiceAccountMissing, policy.SeverityError, fmt.Sprintf("OperatorGroup %s/%s: %s (OLM sets %s=True, reason %s, and does not sync the group)",
				og.Namespace, og.Name, g.message, operatorsv1.OperatorGroupServiceAccountCondition, operatorsv1.OperatorGroupServiceAccountReason))
		}
		gp := report.OperatorGroupPreview{
			Cluster: v.cluster, Namespace: og.Namespace, Name: og.Name, Origin: g.origin,
			TargetNamespaces: slices.Clone(og.Status.Namespaces),
			Static:           og.Spec.StaticProvidedAPIs, Message: g.message,
		}
		if g.git != nil {
			gp.App, gp.File, gp.Line = g.git.app, g.git.file, g.git.line
		}
		apis := groups.GroupProvidedAPIs(og)
		for _, a := range apis.Sorted() {
			gp.ProvidedAPIs = append(gp.ProvidedAPIs, a.String())
		}
		for _, c := range groups.Conflicts(apis, og, settled) {
			gc := report.GroupConflict{Namespace: c.Namespace, Name: c.Name}
			for _, a := range c.APIs.Sorted() {
				gc.APIs = append(gc.APIs, a.String())
			}
			gp.Conflicts = append(gp.Conflicts, gc)
		}
		p.groups = append(p.groups, gp)
	}
}

// describeChanges says what the change does to each Subscription, against what the base
// revision runs.
func (p *clusterPreview) describeChanges(base map[string]*run) {
	for i := range p.subs {
		sp := &p.subs[i]
		to := p.runs[sp.ID()]
		ch := &report.SubscriptionChange{}
		if to != nil {
			ch.To = to.csv.Name
		}
		b := base[sp.ID()]
		switch {
		case b == nil:
			ch.Type = report.ChangeInstall
		case b.channel != sp.Channel:
			ch.Type, ch.From, ch.FromChannel = report.ChangeChannelSwitch, b.csv.Name, b.channel
		case to != nil && to.csv.Name == b.csv.Name:
			ch.Type, ch.From = report.ChangeUnchanged, b.csv.Name
		default:
			ch.Type, ch.From = report.ChangeUpgrade, b.csv.Name
		}
		sp.Change = ch
	}
}
