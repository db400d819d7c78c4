package check

import (
	"context"
	"fmt"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/sources"
)

// Change checks a revision of src and, when baseRef names one, its pull request's base
// first, for Report(head, base): `olmsync check [--base REV]`. stages makes each revision's
// stages, given nil for the base and the base's Result for the head (nil without a base),
// so that a stage can take what the base does as given: the OLM preview takes what the
// base installs as what the cluster runs, and says what the change does.
//
// The two revisions share one render cache, findings cache and compiled policies (most
// apps are the same in both: each is built and evaluated once), and each gets half of
// opts.Render.NodeBudget, since both are held at once. The head is opened and its apps
// found while the base is: reading a revision and walking it are one core's work, and the
// head's builds, which start once the base is checked, need nothing more.
func Change(ctx context.Context, src Source, baseRef string, opts Options, stages func(base *Result) []Stage) (head, base *Result, err error) {
	if baseRef == "" {
		opts.Stages = stages(nil)
		head, err = runSource(ctx, src, opts)
		return head, nil, err
	}
	opts.Render.NodeBudget /= 2
	if src.Blobs == nil {
		src.Blobs = sources.NewBlobs() // the files the two revisions have in common, read once
	}
	if opts.Render.Cache == nil {
		opts.Render.Cache = render.NewCache()
	}
	if opts.PolicyCache == nil {
		opts.PolicyCache = policy.NewFindingsCache()
	}
	if opts.PolicyCompiled == nil {
		opts.PolicyCompiled = policy.NewCompileCache()
	}
	headCtx, stopHead := context.WithCancel(ctx)
	defer stopHead()
	var headFound *found
	var headErr error
	headDone := make(chan struct{})
	go func() {
		defer close(headDone)
		headFound, headErr = openAndFind(headCtx, src, &opts)
	}()

	baseOpts := opts
	baseOpts.Stages = stages(nil)
	base, err = runSource(ctx, src.At(baseRef), baseOpts)
	if err != nil {
		stopHead()
		<-headDone
		if headFound != nil {
			_ = headFound.tree.Settle() // a working tree's git status ends before Change returns
		}
		return nil, nil, fmt.Errorf("base revision: %w", err)
	}
	<-headDone
	if headErr != nil {
		return nil, nil, headErr
	}
	opts.Stages = stages(base)
	if head, err = runFound(ctx, headFound, opts); err != nil {
		return nil, nil, err
	}
	return head, base, nil
}

// openAndFind opens one revision and finds its apps.
func openAndFind(ctx context.Context, src Source, opts *Options) (*found, error) {
	tree, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	return find(ctx, tree, opts), nil
}

// runSource opens one revision and checks it.
func runSource(ctx context.Context, src Source, opts Options) (*Result, error) {
	f, err := openAndFind(ctx, src, &opts)
	if err != nil {
		return nil, err
	}
	return runFound(ctx, f, opts)
}
