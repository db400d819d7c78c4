package check

import (
	"fmt"
	"strings"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/report"
)

// RulesDocumentation is where the built-in rules are documented; a rule's anchor follows.
const RulesDocumentation = "https://github.com/olmsync/olmsync/blob/main/docs/policy.md"

// ReportOptions shape the report document.
type ReportOptions struct {
	// Tool names the program writing the report (its version).
	Tool report.Tool
	// FailOn says which errors fail the check; the report's verdict is decided under it.
	FailOn report.FailOn
	// ListObjects lists every checked object (report.Objects), which JUnit turns into
	// passed test cases.
	ListObjects bool
}

// Report assembles the completed Report document of the checked revision head. With a
// base (the pull request's base revision, checked the same way), each violation is
// marked new or pre-existing and the OLM objects the change adds, removes or modifies are
// listed; apps that failed to render in either revision are left out of that comparison,
// since a failed render is not a removal. Problems of the base are listed as such: they
// do not make the check incomplete.
func Report(head, base *Result, opts ReportOptions) (*report.Report, error) {
	r := &report.Report{
		Tool:       opts.Tool,
		Revision:   head.Revision,
		Apps:       reportApps(head),
		Rules:      reportRules(head.Rules),
		Violations: reportViolations(head.Violations),
		Problems:   append([]report.Problem(nil), head.Problems...),
		Warnings:   append([]report.Warning(nil), head.Warnings...),
	}
	if base != nil {
		rev := base.Revision
		r.Base = &rev
		r.Violations = report.MarkAgainstBase(r.Violations, reportViolations(base.Violations))
		failed := failedApps(head, base)
		r.Changes = report.DiffObjects(manifests(base, failed), manifests(head, failed))
		for _, p := range base.Problems {
			p.Base = true
			r.Problems = append(r.Problems, p)
		}
	}
	if opts.ListObjects {
		r.Objects = reportObjects(head)
	}
	for _, s := range head.Sections {
		s.AddTo(r)
	}
	if err := report.Complete(r, opts.FailOn); err != nil {
		return nil, fmt.Errorf("assemble the report: %w", err)
	}
	return r, nil
}

func reportApps(res *Result) []report.App {
	if res.Render == nil {
		return nil
	}
	apps := make([]report.App, 0, len(res.Render.Apps))
	for _, a := range res.Render.Apps {
		apps = append(apps, report.App{Name: a.Name, Path: a.Path, Cluster: a.Cluster, ClusterScope: a.ClusterScope})
	}
	return apps
}

func reportRules(rules []policy.Rule) []report.Rule {
	out := make([]report.Rule, 0, len(rules))
	for _, rule := range rules {
		rr := report.Rule{
			ID: rule.ID, Title: rule.Title, Description: rule.Description,
			Severity: report.Severity(rule.Severity), Kinds: rule.Kinds, Custom: rule.Custom,
		}
		if !rule.Custom {
			rr.Help = rule.Help()
			rr.HelpURI = ruleDocumentation(rule.ID)
		}
		out = append(out, rr)
	}
	return out
}

// ruleDocumentation links a built-in rule to its section of docs/policy.md.
func ruleDocumentation(id string) string {
	switch id {
	case policy.RuleWaiverExpired, policy.RuleWaiverUnused, policy.RuleWaiverMalformed:
		return RulesDocumentation + "#the-waiver-rules"
	}
	return RulesDocumentation + "#" + strings.ToLower(id)
}

func reportViolations(vs []policy.Violation) []report.Violation {
	out := make([]report.Violation, 0, len(vs))
	for _, v := range vs {
		rv := report.Violation{
			Rule: v.Rule, Severity: report.Severity(v.Severity), Message: v.Message,
			App: v.App, Cluster: v.Cluster, File: v.File, Line: v.Line,
			Object: report.ObjectRef(v.Object),
			Waived: v.Waived,
		}
		if v.Waived {
			rv.Waiver = &report.Waiver{Reason: v.WaiverReason, Source: report.WaiverSource(v.WaiverSource), Expires: v.WaiverExpires}
		}
		out = append(out, rv)
	}
	return out
}

// failedApps are the apps (cluster and name) that failed to render in either revision.
func failedApps(results ...*Result) map[appKey]bool {
	failed := map[appKey]bool{}
	for _, res := range results {
		if res.Render == nil {
			continue
		}
		for _, a := range res.Render.Failed() {
			failed[appKey{a.Cluster, a.Name}] = true
		}
	}
	return failed
}

type appKey struct{ cluster, name string }

// manifests are the objects of a checked revision as report.DiffObjects compares them,
// in the namespace the policy input says they land in, leaving out the apps in skip.
func manifests(res *Result, skip map[appKey]bool) []report.Manifest {
	var out []report.Manifest
	for _, in := range res.Inputs {
		for _, app := range in.Apps {
			if skip[appKey{in.Cluster, app.Name}] {
				continue
			}
			for _, o := range app.Objects {
				out = append(out, report.Manifest{
					Cluster: in.Cluster, App: app.Name, File: o.Source.File, Line: o.Source.Line,
					Namespace: o.Namespace, Object: o.Object,
				})
			}
		}
	}
	return out
}

func reportObjects(res *Result) []report.Object {
	var out []report.Object
	for _, in := range res.Inputs {
		for _, app := range in.Apps {
			for _, o := range app.Objects {
				ref := report.ObjectRef{Namespace: o.Namespace}
				ref.APIVersion, _ = o.Object["apiVersion"].(string)
				ref.Kind, _ = o.Object["kind"].(string)
				if meta, ok := o.Object["metadata"].(map[string]any); ok {
					ref.Name, _ = meta["name"].(string)
				}
				out = append(out, report.Object{
					App: app.Name, Cluster: in.Cluster, File: o.Source.File, Line: o.Source.Line, Object: ref,
				})
			}
		}
	}
	return out
}
