package check

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
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
		Violations: reportViolations(head, head.Violations),
		Problems:   append([]report.Problem(nil), head.Problems...),
		Warnings:   append([]report.Warning(nil), head.Warnings...),
		NotChecked: notChecked(head),
	}
	if base != nil {
		rev := base.Revision
		r.Base = &rev
		r.Violations = report.MarkAgainstBase(r.Violations, reportViolations(base, base.Violations))
		r.Violations = append(r.Violations, report.MergeFindings(unknownViolations(head, base))...)
		failed := failedApps(head, base)
		r.Changes = report.DiffObjects(manifests(base, failed), manifests(head, failed))
		markProblems(r, head, base)
		r.Warnings = append(r.Warnings, uncheckedChanges(head, base)...)
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
		app := report.App{Name: a.Name, Path: a.Path, Cluster: a.Cluster, ClusterScope: a.ClusterScope, ClusterFrom: string(a.ClusterFrom), Library: a.Library}
		if a.Err != nil {
			file, line := errorLocation(a)
			app.Error = &report.AppError{File: file, Line: line, Message: a.Err.Error(), Hint: render.Hint(a.Err)}
		}
		apps = append(apps, app)
	}
	return apps
}

// notChecked lists what discovery left out on purpose: Applications of other
// repositories and unused bases.
func notChecked(res *Result) []report.NotChecked {
	if res.Render == nil {
		return nil
	}
	var out []report.NotChecked
	for _, f := range res.Render.Foreign {
		out = append(out, report.NotChecked{Kind: f.Kind, Name: f.Name, File: f.File, Line: f.Line,
			RepoURL: f.RepoURL, Path: f.Path, Reason: f.Reason})
	}
	for _, u := range res.Render.Unused {
		out = append(out, report.NotChecked{Kind: "Kustomization", Name: u.Path, File: u.File, Path: u.Path, Reason: u.Reason})
	}
	return out
}

// markProblems says, for each problem and app failure of the head, whether the base had
// it: an app failure is pre-existing when the app failed in the base too (a new failure
// of an app that rendered there counts); another problem when the base has the same
// problem of the same app and file (its message compared without line numbers, which
// move with edits).
func markProblems(r *report.Report, head, base *Result) {
	failedInBase := map[string]bool{}
	if base.Render != nil {
		for _, a := range base.Render.Failed() {
			failedInBase[a.ID()] = true
		}
	}
	baseProblems := map[problemKey]int{}
	for _, p := range base.Problems {
		baseProblems[keyOfProblem(p)]++
	}
	status := func(pre bool) report.Status {
		if pre {
			return report.StatusPreExisting
		}
		return report.StatusNew
	}
	appFailed := map[string]bool{}
	if head.Render != nil {
		for _, a := range head.Render.Failed() {
			appFailed[a.ID()] = true
		}
	}
	for i := range r.Problems {
		p := &r.Problems[i]
		if p.App != "" && appFailed[p.App] {
			// pre-existing when every app it fails failed in the base too
			pre := failedInBase[p.App]
			for _, app := range p.Apps {
				pre = pre && failedInBase[app]
			}
			p.Status = status(pre)
			continue
		}
		k := keyOfProblem(*p)
		p.Status = status(baseProblems[k] > 0)
		if baseProblems[k] > 0 {
			baseProblems[k]--
		}
	}
	for i := range r.Apps {
		if e := r.Apps[i].Error; e != nil {
			id := appID(r.Apps[i].Cluster, r.Apps[i].Name)
			e.Status = status(failedInBase[id])
		}
	}
}

type problemKey struct{ app, file, message string }

// lineRef is a ":<line>" (or ":<line>:<column>") after a file name in a message.
var lineRef = regexp.MustCompile(`(\.(?:ya?ml|json|rego)|Kustomization|kustomization):\d+(?::\d+)?`)

func keyOfProblem(p report.Problem) problemKey {
	return problemKey{p.App, p.File, lineRef.ReplaceAllString(p.Message, "$1")}
}

func appID(cluster, name string) string {
	a := render.App{Cluster: cluster, Name: name}
	return a.ID()
}

// unknownViolations are the base's violations of the apps that rendered in the base but
// fail in the head: whether the head still has them cannot be told, so they are listed
// as unknown rather than left out (which would read as resolved).
func unknownViolations(head, base *Result) []report.Violation {
	if head.Render == nil || base.Render == nil {
		return nil
	}
	failedInBase := failedApps(base)
	gone := map[appKey]bool{}
	for _, a := range head.Render.Failed() {
		if k := (appKey{a.Cluster, a.Name}); !failedInBase[k] {
			gone[k] = true
		}
	}
	var out []report.Violation
	for _, v := range reportViolations(base, base.Violations) {
		if gone[appKey{v.Cluster, v.App}] {
			v.Status = report.StatusUnknown
			out = append(out, v)
		}
	}
	return out
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

// reportViolations are a checked revision's findings as the report has them: once per
// source object (report.MergeFindings), each with its object's digests, which tell a
// moved object from a new one against a base.
func reportViolations(res *Result, vs []policy.Violation) []report.Violation {
	type at struct {
		cluster, app, file string
		line               int
	}
	objects := map[at]map[string]any{}
	for _, in := range res.Inputs {
		for _, app := range in.Apps {
			for _, o := range app.Objects {
				objects[at{in.Cluster, app.Name, o.Source.File, o.Source.Line}] = o.Object
			}
		}
	}
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
		if obj, ok := objects[at{v.Cluster, v.App, v.File, v.Line}]; ok {
			rv.Digest = report.DigestObject(obj)
		}
		out = append(out, rv)
	}
	return report.MergeFindings(out)
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
