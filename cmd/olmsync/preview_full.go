//go:build !olmsync_light

package main

import (
	"context"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/check/preview"
)

// stages loads what the flags name for the OLM preview (catalogs, cluster states, live
// clusters: once, for the base and the head alike), sets the clusters' global catalog
// namespaces from it, and returns the preview stage of each checked revision: the head's
// takes what the base installs as what the cluster runs.
func (f previewFlags) stages(ctx context.Context, opts *check.Options) (func(base *check.Result) []check.Stage, error) {
	in := preview.Inputs(f)
	loaded, err := in.Load(ctx)
	if err != nil {
		return nil, err
	}
	opts.GlobalCatalogNamespaces = in.GlobalCatalogNamespaces(loaded)
	return func(base *check.Result) []check.Stage {
		o := loaded
		if base != nil {
			o.Base = preview.SectionOf(base)
		}
		return []check.Stage{preview.New(o)}
	}, nil
}

// handOffPreview returns err as it is: this build runs the OLM preview itself (the light
// build's hands a check that needs it to this one).
func handOffPreview(err error) error { return err }
