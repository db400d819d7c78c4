package gitsync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// Build is one revision of a Sync's repository, rendered and checked by the code `olmsync
// check` runs, and narrowed to the Sync's apps: what to apply, what the placement rules
// keep out, and what to report. The reconciler and `olmsync diff sync` both make it with
// BuildRevision, so that what diff says a reconcile would do is what it does.
type Build struct {
	// Revision is the revision the tree held.
	Revision string
	// Apps are the Sync's apps: its cluster's, narrowed to spec.apps; rendered or failed.
	Apps []*render.AppResult
	// Problems are the check's problems that concern the Sync's apps or no app in
	// particular (olmsync.yaml, a user rule, a missing Application path), and spec.apps
	// naming an app the revision does not have. Any of them makes the build incomplete:
	// nothing is applied or pruned.
	Problems []report.Problem
	// Violations are the unwaived findings about the Sync's cluster and apps, in the
	// check's order (file, line, rule).
	Violations []policy.Violation
	// Mode is the Sync's policy mode.
	Mode olmsyncv1alpha1.PolicyMode
	// skips counts the Problems that are an app rendered without a generator whose
	// plugin is off (render.ReasonPluginSkipped).
	skips int
	// gated maps the inventory ID of each object an unwaived error keeps out (enforce
	// mode) to the findings that gate it.
	gated map[string][]policy.Violation
}

// BuildRevision checks the revision tree holds (check.Run, with the Sync's rule folders
// and pb, what the Sync adds to every app: PostBuildFor) and narrows the result to the
// Sync. It fails only when the context ends or the tree
// cannot be read at all; whatever is wrong with the repository is a Problem.
func BuildRevision(ctx context.Context, tree *sources.Tree, obj *olmsyncv1alpha1.Sync, opts check.Options, pb *render.PostBuild) (*Build, error) {
	opts.RuleFolders = append(slices.Clone(opts.RuleFolders), ruleFolders(obj)...)
	opts.Render.PostBuild = pb
	opts.Render.Switches = render.SyncSwitches
	opts.Deployer, opts.Cluster = fmt.Sprintf("Sync %s/%s", obj.Namespace, obj.Name), obj.Spec.Cluster
	res, err := check.Run(ctx, tree, opts)
	if err != nil {
		return nil, err
	}
	return Select(res, obj), nil
}

func ruleFolders(obj *olmsyncv1alpha1.Sync) []string {
	out := make([]string, 0, len(obj.Spec.Policy.Rules))
	for _, r := range obj.Spec.Policy.Rules {
		out = append(out, string(r))
	}
	return out
}

// Select narrows a checked revision to a Sync: the apps of spec.cluster (those spec.apps
// names, when it names any), the problems and findings that concern them, and in enforce
// mode the objects an unwaived error gates.
//
// What is deployed is what the repository says is deployed: in a repository whose entry
// points (Argo CD Applications and ApplicationSets, Flux Kustomizations) name its apps, a
// kustomization root none of them covers is a library root, checked (the check covers
// everything) but not applied, as Argo CD or Flux would not apply it.
func Select(res *check.Result, obj *olmsyncv1alpha1.Sync) *Build {
	b := &Build{Revision: res.Tree.Revision, Mode: obj.PolicyMode(), gated: map[string][]policy.Violation{}}
	wanted := map[string]bool{}
	for _, name := range obj.Spec.Apps {
		wanted[name] = true
	}
	ids, names := map[string]bool{}, map[string]bool{}
	if res.Render != nil {
		for _, a := range res.Render.Apps {
			if a.Cluster != obj.Spec.Cluster || (len(wanted) > 0 && !wanted[a.Name]) || !a.Deployed() {
				continue
			}
			b.Apps = append(b.Apps, a)
			ids[a.ID()], names[a.Name] = true, true
		}
	}
	skipped := pluginSkips(res.Render)
	for _, p := range res.Problems {
		if p.App == "" || ids[p.App] {
			b.Problems = append(b.Problems, p)
			if skipped[skipKey{p.App, p.File, p.Line}] {
				b.skips++
			}
		}
	}
	for _, name := range obj.Spec.Apps {
		if !names[name] && res.Render != nil {
			b.Problems = append(b.Problems, report.Problem{App: name,
				Message: fmt.Sprintf("spec.apps names app %q, which %s does not have in %s", name, res.Tree.Revision, clusterName(obj.Spec.Cluster))})
		}
	}
	if res.Render != nil && len(b.Apps) == 0 && len(obj.Spec.Apps) == 0 {
		// An empty desired state would prune everything the Sync applied: far more likely a
		// renamed cluster or a wrong spec.path than a wish. Deleting the Sync removes its
		// objects on purpose.
		b.Problems = append(b.Problems, report.Problem{
			Message: fmt.Sprintf("found no apps of %s in %s", clusterName(obj.Spec.Cluster), res.Tree.Revision)})
	}
	for _, v := range res.Violations {
		if v.Waived || v.Cluster != obj.Spec.Cluster || (v.App != "" && !names[v.App]) {
			continue
		}
		b.Violations = append(b.Violations, v)
		if b.Mode == olmsyncv1alpha1.PolicyModeEnforce && v.Severity == policy.SeverityError && v.Object.Kind != "" {
			id := objectID(v.Object)
			b.gated[id] = append(b.gated[id], v)
		}
	}
	return b
}

func clusterName(c string) string {
	if c == "" {
		return "the default cluster"
	}
	return fmt.Sprintf("cluster %q", c)
}

// objectID is the inventory ID of the object a finding names.
func objectID(o policy.ObjectRef) string {
	gv, _ := schema.ParseGroupVersion(o.APIVersion)
	return inventory.Entry{Namespace: o.Namespace, Name: o.Name, Group: gv.Group, Kind: o.Kind}.ID()
}

// Complete reports whether the build may drive an apply and a prune.
func (b *Build) Complete() bool { return len(b.Problems) == 0 }

// IncompleteReason is the BuildFailed condition's reason for an incomplete build:
// PluginSkipped when every problem is a generator left out for its plugin, else
// BuildFailed.
func (b *Build) IncompleteReason() string {
	if len(b.Problems) > 0 && b.skips == len(b.Problems) {
		return olmsyncv1alpha1.PluginSkippedReason
	}
	return olmsyncv1alpha1.BuildFailedReason
}

// skipKey is where a generator was left out, for one app.
type skipKey struct {
	app, file string
	line      int
}

// pluginSkips are the generators render left out because their plugin is off, per app:
// the check reports each as a problem of that app at the generator's file and line.
func pluginSkips(res *render.Result) map[skipKey]bool {
	out := map[skipKey]bool{}
	if res == nil {
		return out
	}
	for _, w := range res.Warnings {
		if w.Reason != render.ReasonPluginSkipped {
			continue
		}
		for _, app := range w.Apps {
			out[skipKey{app, w.File, w.Line}] = true
		}
	}
	return out
}

// ProblemMessage says what made the build incomplete, naming files and lines: the first
// three problems, and how many more there are.
func (b *Build) ProblemMessage() string {
	msgs := make([]string, 0, 3)
	for _, p := range b.Problems[:min(3, len(b.Problems))] {
		msg := p.Message
		if p.File != "" && !strings.Contains(msg, p.File) {
			msg = fmt.Sprintf("%s: %s", location(p.File, p.Line), msg)
		}
		msgs = append(msgs, msg)
	}
	if more := len(b.Problems) - len(msgs); more > 0 {
		msgs = append(msgs, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(msgs, "; ")
}

func location(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

// Gated returns the findings that keep a rendered object out, or nil.
func (b *Build) Gated(o *render.Object) []policy.Violation {
	return b.gated[inventory.EntryOfRendered(o).ID()]
}

// Objects are what to apply: every object of the apps that rendered, in the namespace it
// lands in, but for the gated ones.
func (b *Build) Objects() []*unstructured.Unstructured {
	var keep []*render.Object
	for _, a := range b.Apps {
		for _, o := range a.Objects {
			if b.Gated(o) == nil {
				keep = append(keep, o)
			}
		}
	}
	return apply.ObjectsOf(keep)
}

// Desired is the desired state of the reconcile: every object of the apps, gated ones
// included (they are not gone). fetchErr is the fetch's error when the build is of the
// last good revision read from the cache; prune then refuses to run.
func (b *Build) Desired(fetchErr error) *inventory.Desired {
	return inventory.DesiredOf(fetchErr, b.Apps, nil)
}

// Errors are the unwaived errors among the violations.
func (b *Build) Errors() []policy.Violation {
	var out []policy.Violation
	for _, v := range b.Violations {
		if v.Severity == policy.SeverityError {
			out = append(out, v)
		}
	}
	return out
}

// PolicyMessage describes the unwaived errors for the PolicyViolation condition and its
// Event: rule, object, file and line of the first three, and how many there are.
func (b *Build) PolicyMessage() string {
	errs := b.Errors()
	if len(errs) == 0 {
		return ""
	}
	verb := "reported (audit mode)"
	if b.Mode == olmsyncv1alpha1.PolicyModeEnforce {
		verb = "not applied"
	}
	parts := make([]string, 0, 3)
	for _, v := range errs[:min(3, len(errs))] {
		parts = append(parts, describeViolation(v))
	}
	msg := fmt.Sprintf("%d placement-rule error(s), %s: %s", len(errs), verb, strings.Join(parts, "; "))
	if len(errs) > 3 {
		msg += fmt.Sprintf("; and %d more", len(errs)-3)
	}
	return msg
}

func describeViolation(v policy.Violation) string {
	what := v.Rule
	if v.Object.Kind != "" {
		what += " " + v.Object.String()
	}
	if v.File != "" {
		what += " (" + location(v.File, v.Line) + ")"
	}
	return what + ": " + v.Message
}

// StatusViolations are the violations as the Sync's status holds them, at most
// MaxViolations, and how many there are.
func (b *Build) StatusViolations() ([]olmsyncv1alpha1.PolicyViolation, int) {
	out := make([]olmsyncv1alpha1.PolicyViolation, 0, min(len(b.Violations), olmsyncv1alpha1.MaxViolations))
	for _, v := range b.Violations[:min(len(b.Violations), olmsyncv1alpha1.MaxViolations)] {
		pv := olmsyncv1alpha1.PolicyViolation{Rule: v.Rule, Severity: string(v.Severity), Message: v.Message,
			App: v.App, File: v.File, Line: v.Line}
		if v.Object.Kind != "" {
			pv.Object = &olmsyncv1alpha1.ObjectReference{APIVersion: v.Object.APIVersion, Kind: v.Object.Kind,
				Namespace: v.Object.Namespace, Name: v.Object.Name}
			pv.Gated = b.Mode == olmsyncv1alpha1.PolicyModeEnforce && v.Severity == policy.SeverityError
		}
		out = append(out, pv)
	}
	if len(out) == 0 {
		out = nil
	}
	return out, len(b.Violations)
}
