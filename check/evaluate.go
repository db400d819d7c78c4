package check

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// evaluation runs the rules over a rendered revision.
type evaluation struct {
	tree *sources.Tree
	cfg  *render.Config
	opts *Options
	// rules is the engine that evaluated the rules (without the users' rules when those
	// could not be used); its waivers are applied once every stage has run.
	rules *policy.Engine
}

// run evaluates the built-in rules and users' rules over res.Inputs, without waivers
// (waive applies them to every stage's findings). A user's rule that
// cannot be used (it does not parse or compile, or fails while it runs) is a Problem
// naming its file and line, and the built-in rules are evaluated without the users'
// rules: a broken custom rule must not hide the placement rules' findings.
func (ev *evaluation) run(ctx context.Context, res *Result) error {
	user := append(ev.repositoryPolicies(), ev.opts.Policies...)
	engine, err := ev.engine(ctx, user)
	if err != nil && len(user) > 0 {
		if !addPolicyProblems(res, err) {
			return err
		}
		user = nil
		engine, err = ev.engine(ctx, nil)
	}
	if err != nil {
		return err
	}
	violations, err := engine.Findings(ctx, res.Inputs...)
	if err != nil && ctx.Err() != nil {
		// The caller stopped the check (the memory ceiling of `check --memory-limit`):
		// the error names the rule that was running, and nothing more can be evaluated.
		return fmt.Errorf("evaluate the rules: %w", err)
	}
	if err != nil && len(user) > 0 {
		if !addPolicyProblems(res, err) {
			return err
		}
		if engine, err = ev.engine(ctx, nil); err != nil {
			return err
		}
		violations, err = engine.Findings(ctx, res.Inputs...)
	}
	if err != nil {
		return fmt.Errorf("evaluate the rules: %w", err)
	}
	ev.rules = engine
	res.Rules = engine.Rules()
	res.Violations = violations
	return nil
}

// waive applies the waivers (olmsync.dev/waive annotations, olmsync.yaml) to every
// violation of the result, whichever rule or stage found it, and adds the findings about
// the waivers themselves (OP900–OP902). It runs once, after the last stage: a waiver of
// an OLM rule is only used once the preview has run, and is stale only if nothing found
// it.
func (ev *evaluation) waive(res *Result) error {
	violations, err := ev.rules.Waive(res.Inputs, res.Violations)
	if err != nil {
		return fmt.Errorf("apply the waivers: %w", err)
	}
	res.Violations = violations
	return nil
}

func (ev *evaluation) engine(ctx context.Context, user []policy.PolicySource) (*policy.Engine, error) {
	return policy.New(ctx, policy.Options{
		Policies: user,
		Waivers:  waivers(ev.cfg, render.ConfigFileName),
		Now:      ev.opts.Now,
		Timeout:  ev.opts.PolicyTimeout,
		Sandbox:  ev.opts.PolicySandbox,
		Cache:    ev.opts.PolicyCache,
		Compiled: ev.opts.PolicyCompiled,
	})
}

// repositoryPolicies are the rule folders olmsync.yaml lists (policy.rules) and those the
// caller names in the repository (Options.RuleFolders), read from the tree itself: for a
// committed revision they are the revision's rules, and no path leaves the repository.
func (ev *evaluation) repositoryPolicies() []policy.PolicySource {
	var out []policy.PolicySource
	for _, dir := range append(slices.Clone(ev.cfg.Policy.Rules), ev.opts.RuleFolders...) {
		dir = path.Clean(dir)
		out = append(out, policy.PolicySource{Root: dir, FS: treeFS(ev.tree.FS, ev.tree.Abs(dir))})
	}
	return out
}

// addPolicyProblems records the problems of a *policy.PolicyError in res; it reports
// false for any other error.
func addPolicyProblems(res *Result, err error) bool {
	var pe *policy.PolicyError
	if !errors.As(err, &pe) {
		return false
	}
	for _, p := range pe.Problems {
		res.Problems = append(res.Problems, report.Problem{
			File: p.File, Line: p.Line,
			Message: "policy: " + p.String() + " (the built-in rules were evaluated without the users' rules)",
		})
	}
	return true
}
