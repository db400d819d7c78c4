package check

import (
	"context"
	"fmt"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
)

// Change checks a revision of src and, when baseRef names one, its pull request's base
// first, for Report(head, base): `olmsync check [--base REV]`. stages makes each revision's
// stages, given nil for the base and the base's Result for the head (nil without a base),
// so that a stage can take what the base does as given: the OLM preview takes what the
// base installs as what the cluster runs, and says what the change does.
//
// The two revisions share one render cache, findings cache and compiled policies (most
// apps are the same in both: each is built and evaluated once), and each gets half of
// opts.Render.NodeBudget, since both are held at once.
func Change(ctx context.Context, src Source, baseRef string, opts Options, stages func(base *Result) []Stage) (head, base *Result, err error) {
	if baseRef != "" {
		opts.Render.NodeBudget /= 2
		if opts.Render.Cache == nil {
			opts.Render.Cache = render.NewCache()
		}
		if opts.PolicyCache == nil {
			opts.PolicyCache = policy.NewFindingsCache()
		}
		if opts.PolicyCompiled == nil {
			opts.PolicyCompiled = policy.NewCompileCache()
		}
		baseOpts := opts
		baseOpts.Stages = stages(nil)
		if base, err = runSource(ctx, src.At(baseRef), baseOpts); err != nil {
			return nil, nil, fmt.Errorf("base revision: %w", err)
		}
	}
	opts.Stages = stages(base)
	if head, err = runSource(ctx, src, opts); err != nil {
		return nil, nil, err
	}
	return head, base, nil
}

// runSource opens one revision and checks it.
func runSource(ctx context.Context, src Source, opts Options) (*Result, error) {
	tree, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	return Run(ctx, tree, opts)
}
