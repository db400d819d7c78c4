//go:build olmsync_light

package main

import (
	"context"
	"errors"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/render"
)

// errPreviewInFullBuild ends a check whose olmsync.yaml names catalogs: this build links
// no OLM preview (its resolver, CRD upgrade checks and API types took 14 MB of resident
// memory from every check, issue 32), so the full build checks the repository instead.
var errPreviewInFullBuild = errors.New("olmsync.yaml names catalogs for the OLM preview, which the full build runs")

// stages: a check that names a catalog, a cluster state or a live cluster on the command
// line was handed to the full build before it started (handOff); one whose olmsync.yaml
// names catalogs is handed over as soon as that file is read, before any app is built.
// Without either the preview does nothing, so this build runs no stage.
func (f previewFlags) stages(_ context.Context, opts *check.Options) (func(base *check.Result) []check.Stage, error) {
	if f.GlobalCatalogNamespace != "" {
		opts.GlobalCatalogNamespaces = map[string]string{"": f.GlobalCatalogNamespace}
	}
	opts.Render.Accept = func(cfg *render.Config) error {
		if cfg != nil && len(cfg.Catalogs) > 0 {
			return errPreviewInFullBuild
		}
		return nil
	}
	return func(*check.Result) []check.Stage { return nil }, nil
}

// handOffPreview runs the check in the full build when it needs the OLM preview.
func handOffPreview(err error) error {
	if errors.Is(err, errPreviewInFullBuild) {
		return execFullBuild()
	}
	return err
}
