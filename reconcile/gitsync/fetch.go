package gitsync

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/sources"
)

// fetch brings the revision spec.source names into the cache and reads it (step 1), off
// the reconcile workers (fetches): without the outcome of its fetch, the reconcile starts
// one and ends (errFetching), and the Sync is reconciled again when the fetch is done. A
// fetch that fails keeps the last applied revision: it is read back from the cache, so
// drift is still corrected, but FetchFailed says why nothing newer comes and nothing is
// pruned. A spec that can never be fetched stalls; a missing Secret waits.
func (r *Reconciler) fetch(ctx context.Context, obj *olmsyncv1alpha1.Sync, p *pass) error {
	req, err := r.fetchRequest(ctx, obj)
	if err != nil {
		return err
	}
	p.req = req
	out, err := r.fetchOutcome(ctx, obj, req)
	if err != nil {
		return err
	}
	p.fetched = out
	r.Metrics.RecordFetch(obj, out.took, out.err)
	logFetch(ctx, obj, req, out.tree, out.err, out.took)
	var notFound *sources.PathNotFoundError
	switch {
	case out.err == nil:
		conditions.Delete(obj, olmsyncv1alpha1.FetchFailedCondition)
		r.fetched(obj, p, out.tree, nil)
		return nil
	case errors.As(out.err, &notFound):
		// Fetched: the repository has no such folder. That is the content's problem.
		conditions.Delete(obj, olmsyncv1alpha1.FetchFailedCondition)
		obj.Status.LastFetchedRevision = notFound.Revision
		conditions.MarkTrue(obj, olmsyncv1alpha1.BuildFailedCondition, olmsyncv1alpha1.BuildFailedReason, "spec.path: %s", out.err)
		return waiting("%s", out.err)
	case out.lastErr != nil:
		conditions.MarkTrue(obj, olmsyncv1alpha1.FetchFailedCondition, fetchReason(out.err), "%s", out.err)
		return waiting("fetch: %s", out.err)
	}
	conditions.MarkTrue(obj, olmsyncv1alpha1.FetchFailedCondition, fetchReason(out.err),
		"%s; the last applied revision %s stays applied", out.err, out.last.Revision)
	r.fetched(obj, p, out.last, out.err)
	return nil
}

// fetchOutcome is the outcome of the Sync's fetch, or errFetching while it is under way. A
// Reconciler made without SetupWithManager (a test, a one-off reconcile) has no fetches:
// it fetches on the caller's goroutine.
func (r *Reconciler) fetchOutcome(ctx context.Context, obj *olmsyncv1alpha1.Sync, req sources.FetchRequest) (fetchOutcome, error) {
	work := r.fetchWork(obj, req)
	if r.fetches == nil {
		out := work(ctx)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		return out, nil
	}
	want := fetchWant{uid: obj.UID, generation: obj.Generation, requestedAt: requestedAt(obj)}
	out, ok := r.fetches.take(key(obj), want, sources.RedactURL(req.URL), sources.ServerOf(req.URL), work)
	if !ok {
		return out, errFetching
	}
	return out, nil
}

// fetchWork is the fetch of req, as fetches runs it: within spec.source.timeout, and on a
// failure the last applied revision read back from the cache; on a new revision, how it
// relates to the applied one. Whatever reads the cache is done here, off the workers: it
// waits for the repository's lock, which a fetch of the same URL may hold.
func (r *Reconciler) fetchWork(obj *olmsyncv1alpha1.Sync, req sources.FetchRequest) fetchFunc {
	timeout, from := obj.FetchTimeout(), obj.Status.LastAppliedRevision
	return func(ctx context.Context) fetchOutcome {
		start := r.clock()
		fctx, cancel := context.WithTimeout(ctx, timeout)
		tree, err := sources.Fetch(fctx, req)
		out := fetchOutcome{tree: tree, err: err, took: r.clock().Sub(start), timedOut: timedOut(fctx, err), from: from}
		cancel()
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var notFound *sources.PathNotFoundError
		switch {
		case err == nil && from != "" && from != tree.Revision:
			out.relation, out.relationErr = sources.CompareRevisions(cctx, req, from, tree.Revision)
		case err == nil, errors.As(err, &notFound), ctx.Err() != nil:
		default:
			out.last, out.lastErr = lastGood(cctx, from, req)
		}
		return out
	}
}

func (r *Reconciler) fetched(obj *olmsyncv1alpha1.Sync, p *pass, tree *sources.Tree, fetchErr error) {
	p.tree, p.fetchErr = tree, fetchErr
	if fetchErr == nil {
		obj.Status.LastFetchedRevision = tree.Revision
	}
	p.due = applyDue(obj, p.last, tree.Revision, r.clock())
}

// logFetch logs a fetch that brought a new revision or failed at info, and one that found
// nothing new at debug level (it runs every spec.source.interval). The URL is redacted
// and sources' errors carry no secret.
func logFetch(ctx context.Context, obj *olmsyncv1alpha1.Sync, req sources.FetchRequest, tree *sources.Tree, err error, took time.Duration) {
	logger := log.FromContext(ctx).WithValues("url", sources.RedactURL(req.URL), "duration", took.Round(time.Millisecond).String())
	switch {
	case err != nil:
		logger.Info("fetch failed", "error", err.Error())
	case tree.Revision != obj.Status.LastFetchedRevision:
		logger.Info("fetched a new revision", "revision", tree.Revision, "previous", obj.Status.LastFetchedRevision)
	default:
		logger.V(1).Info("fetched, no new revision", "revision", tree.Revision)
	}
}

// lastGood reads the last applied revision back from the cache.
func lastGood(ctx context.Context, revision string, req sources.FetchRequest) (*sources.Tree, error) {
	if revision == "" {
		return nil, errors.New("no revision was applied yet")
	}
	return sources.OpenCached(ctx, req, revision)
}

// fetchReason is the FetchFailed reason of a fetch error.
func fetchReason(err error) string {
	var (
		unreachable *sources.UnreachableError
		auth        *sources.AuthError
		unknown     *sources.UnknownRefError
	)
	switch {
	case errors.As(err, &unreachable):
		return olmsyncv1alpha1.GitUnreachableReason
	case errors.As(err, &auth):
		return olmsyncv1alpha1.AuthenticationFailedReason
	case errors.As(err, &unknown):
		return olmsyncv1alpha1.RevisionNotFoundReason
	}
	return olmsyncv1alpha1.FetchFailedReason
}

// fetchRequest turns spec.source into a fetch (FetchRequestOf). What can never be fetched
// stalls the Sync; a Secret that is missing or has no usable keys makes it wait.
func (r *Reconciler) fetchRequest(ctx context.Context, obj *olmsyncv1alpha1.Sync) (sources.FetchRequest, error) {
	req, err := FetchRequestOf(ctx, r.APIReader, obj, r.Options.CacheDir, r.Options.AllowLocalSources)
	var secretErr *SecretError
	if errors.As(err, &secretErr) {
		conditions.MarkTrue(obj, olmsyncv1alpha1.FetchFailedCondition, olmsyncv1alpha1.SecretNotFoundReason, "%s", secretErr)
		if secretErr.NotFound {
			return req, waiting("Secret %s not found", secretErr.Secret)
		}
		return req, waiting("Secret %s: %v", secretErr.Secret, secretErr.Err)
	}
	return req, err
}

// SecretError says that the Secret spec.source.secretRef names is missing, or holds no
// usable credentials.
type SecretError struct {
	Secret types.NamespacedName
	// NotFound: the Secret is not there. Otherwise Err says what is wrong with its keys.
	NotFound bool
	Err      error
}

func (e *SecretError) Error() string {
	if e.NotFound {
		return fmt.Sprintf("Secret %s of spec.source.secretRef not found", e.Secret)
	}
	return fmt.Sprintf("Secret %s of spec.source.secretRef: %v", e.Secret, e.Err)
}

func (e *SecretError) Unwrap() error { return e.Err }

// FetchRequestOf turns spec.source into a fetch into cacheDir, with the credentials of
// spec.source.secretRef read through secrets, for the reconciler and for `olmsync diff
// sync`. What can never be fetched — a local URL unless allowLocal, credentials in the URL,
// a ref or a path that is not one — is an error the reconciler stalls on; a Secret that is
// missing or has no usable keys is a *SecretError.
func FetchRequestOf(ctx context.Context, secrets client.Reader, obj *olmsyncv1alpha1.Sync, cacheDir string, allowLocal bool) (sources.FetchRequest, error) {
	src := obj.Spec.Source
	req := sources.FetchRequest{URL: src.URL, CacheDir: cacheDir, Path: obj.Spec.Path}
	if strings.HasPrefix(strings.ToLower(src.URL), "file://") && !allowLocal {
		return req, stalled(olmsyncv1alpha1.InvalidSpecReason,
			"spec.source.url %s is a local repository, and olmsync runs without --allow-local-sources", src.URL)
	}
	if u, err := url.Parse(src.URL); err == nil && u.User != nil && (u.Scheme == "https" || u.Scheme == "http") {
		return req, stalled(olmsyncv1alpha1.InvalidSpecReason,
			"spec.source.url %s carries credentials: put them in a Secret named by spec.source.secretRef", sources.RedactURL(src.URL))
	}
	if ref := src.Ref; ref != nil {
		req.Ref = sources.Ref{Branch: ref.Branch, Tag: ref.Tag, SemVer: ref.SemVer, Commit: ref.Commit}
	}
	if err := req.Ref.Validate(); err != nil {
		return req, stalled(olmsyncv1alpha1.InvalidSpecReason, "spec.source.ref: %v", err)
	}
	if _, err := sources.CleanPath(obj.Spec.Path); err != nil {
		return req, stalled(olmsyncv1alpha1.InvalidSpecReason, "spec.path: %v", err)
	}
	if src.SecretRef == nil {
		return req, nil
	}
	secret := &corev1.Secret{}
	name := types.NamespacedName{Namespace: obj.Namespace, Name: src.SecretRef.Name}
	if err := secrets.Get(ctx, name, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return req, &SecretError{Secret: name, NotFound: true}
		}
		return req, fmt.Errorf("read Secret %s of spec.source.secretRef: %w", name, err)
	}
	creds, err := sources.CredentialsFromSecret(secret.Data)
	if err != nil {
		return req, &SecretError{Secret: name, Err: err}
	}
	req.Credentials = creds
	return req, nil
}
