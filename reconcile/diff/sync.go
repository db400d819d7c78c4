package diff

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/sources"
)

// Options say where a diff keeps the repository and whom it asks.
type Options struct {
	// CacheDir keeps the fetched repositories (the user's cache folder for the CLI).
	CacheDir string
	// AllowLocalSources lets a Sync's file:// URL be read from this machine's filesystem.
	AllowLocalSources bool
	// Check is what the reconciler checks with: the zero value, as `olmsync run`.
	Check check.Options
	// Config is the caller's; spec.serviceAccountName is impersonated from it.
	Config *rest.Config
	// StrictSubstitute is `olmsync run --strict-substitute`: an unset ${var} fails.
	StrictSubstitute bool
}

// Sync says what a reconcile of obj would do now, writing nothing to the cluster: it
// fetches spec.source (with the credentials of its Secret, read through c), builds the
// revision with gitsync.BuildRevision, dry-runs the apply as the Sync's service account
// (or as c when it names none) and the prune of what its inventory holds and the revision
// no longer renders. An error means no diff: the fetch failed, the revision did not build
// (a reconcile would then apply and prune nothing), or the cluster could not be asked.
func Sync(ctx context.Context, c client.Client, obj *olmsyncv1alpha1.Sync, opts Options) (*Report, error) {
	req, err := gitsync.FetchRequestOf(ctx, c, obj, opts.CacheDir, opts.AllowLocalSources)
	if err != nil {
		return nil, err
	}
	fctx, cancel := context.WithTimeout(ctx, obj.FetchTimeout())
	tree, err := sources.Fetch(fctx, req)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	// The Sync's own identity applies, and reads its variables, as in a reconcile.
	applyClient, err := gitsync.ClientFor(ctx, opts.Config, c, c, obj)
	if err != nil {
		return nil, err
	}
	vars, err := gitsync.VariablesReader(ctx, opts.Config, c, c, obj)
	if err != nil {
		return nil, err
	}
	pb, err := gitsync.PostBuildFor(ctx, vars, obj, opts.StrictSubstitute)
	if err != nil {
		return nil, err
	}
	copts := opts.Check
	if copts.Render.Decryption, err = gitsync.DecryptionFor(ctx, vars, obj); err != nil {
		return nil, fmt.Errorf("a reconcile would apply and prune nothing: %w", err)
	}
	b, err := gitsync.BuildRevision(ctx, tree, obj, copts, pb)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", tree.Revision, err)
	}
	if !b.Complete() {
		return nil, fmt.Errorf("revision %s did not build, so a reconcile would apply and prune nothing: %s", b.Revision, b.ProblemMessage())
	}
	if err := gitsync.RefuseEncrypted(b.Objects()); err != nil {
		return nil, fmt.Errorf("a reconcile would apply and prune nothing: %w", err)
	}
	previous, err := inventory.FromStatus(obj.Status.Inventory)
	if err != nil {
		return nil, fmt.Errorf("status.inventory cannot be read, so a reconcile would apply and prune nothing: %w", err)
	}
	// A complete build blocks no prune (an app that did not render is a problem); were it
	// blocked, a reconcile would prune nothing, and no entry is stale here either.
	stale, err := previous.Stale(b.Desired(nil), gitsync.PruneGuard(obj))
	var (
		blocked *inventory.PruneBlockedError
		refused *inventory.PruneRefusedError
	)
	switch {
	case errors.As(err, &refused):
		// A reconcile would delete none of them, and say why.
	case err != nil && !errors.As(err, &blocked):
		return nil, err
	}
	applier := &apply.Applier{Client: applyClient, Owner: client.ObjectKeyFromObject(obj),
		DeleteInstalledCSVs: obj.PruneOperators() == olmsyncv1alpha1.PruneOperatorsDelete, Force: obj.Spec.Force}
	applied, err := applier.DryRun(ctx, b.Objects())
	if err != nil {
		return nil, err
	}
	in := Input{Applied: applied.Objects, Apps: map[string]string{}, Stale: stale, Prune: obj.Spec.Prune}
	if refused != nil {
		in.Refused = refused.Error()
	}
	for _, a := range b.Apps {
		for _, o := range a.Objects {
			e := inventory.EntryOfRendered(o)
			in.Apps[e.ID()] = a.Name
			if v := b.Gated(o); v != nil {
				in.Gated = append(in.Gated, GatedObject{Entry: e, Violations: v})
			}
		}
	}
	if in.PruneRuns() {
		in.Pruned, err = applier.DryRunPrune(ctx, stale)
		var pruneErr *apply.PruneError
		if err != nil && !errors.As(err, &pruneErr) {
			return nil, err
		}
	}
	objs, err := Compute(in)
	if err != nil {
		return nil, err
	}
	r := NewReport(objs)
	r.Sync = obj.Namespace + "/" + obj.Name
	r.Revision, r.LastAppliedRevision = b.Revision, obj.Status.LastAppliedRevision
	r.PolicyMode, r.Prune, r.Suspended = string(b.Mode), obj.Spec.Prune, obj.Spec.Suspend
	return r, nil
}

// Desired is what revision of obj's repository renders for the Sync's apps, as the
// reconciler built it: read from the git cache (no fetch: the revision must be one the
// reconciler fetched, such as status.lastAppliedRevision), with the Sync's postBuild,
// and without decrypting anything (nothing here needs a Secret's value). Each object
// says the file and line it came from.
func Desired(ctx context.Context, c client.Client, obj *olmsyncv1alpha1.Sync, revision string, opts Options) ([]*render.Object, error) {
	req, err := gitsync.FetchRequestOf(ctx, c, obj, opts.CacheDir, opts.AllowLocalSources)
	if err != nil {
		return nil, err
	}
	tree, err := sources.OpenCached(ctx, req, revision)
	if err != nil {
		return nil, err
	}
	vars, err := gitsync.VariablesReader(ctx, opts.Config, c, c, obj)
	if err != nil {
		return nil, err
	}
	pb, err := gitsync.PostBuildFor(ctx, vars, obj, opts.StrictSubstitute)
	if err != nil {
		return nil, err
	}
	b, err := gitsync.BuildRevision(ctx, tree, obj, opts.Check, pb)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", revision, err)
	}
	var out []*render.Object
	for _, a := range b.Apps {
		out = append(out, a.Objects...)
	}
	return out, nil
}
