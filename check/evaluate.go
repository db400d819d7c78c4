package check

import (
	"context"
	"errors"
	"fmt"
	"path"

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
}

// run evaluates the built-in rules and users' rules over res.Inputs. A user's rule that
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
	violations, err := engine.Evaluate(ctx, res.Inputs...)
	if err != nil && len(user) > 0 {
		if !addPolicyProblems(res, err) {
			return err
		}
		if engine, err = ev.engine(ctx, nil); err != nil {
			return err
		}
		violations, err = engine.Evaluate(ctx, res.Inputs...)
	}
	if err != nil {
		return fmt.Errorf("evaluate the rules: %w", err)
	}
	res.Rules = engine.Rules()
	res.Violations = violations
	return nil
}

func (ev *evaluation) engine(ctx context.Context, user []policy.PolicySource) (*policy.Engine, error) {
	return policy.New(ctx, policy.Options{
		Policies: user,
		Waivers:  waivers(ev.cfg, render.ConfigFileName),
		Now:      ev.opts.Now,
	})
}

// repositoryPolicies are the rule folders olmsync.yaml lists (policy.rules), read from the
// tree itself: for a committed revision they are the revision's rules, and no path leaves
// the repository.
func (ev *evaluation) repositoryPolicies() []policy.PolicySource {
	var out []policy.PolicySource
	for _, dir := range ev.cfg.Policy.Rules {
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
