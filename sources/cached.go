package sources

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// NotCachedError means the revision asked of OpenCached is not in the cache:
// no Fetch of that URL into that cache brought it, or the cache was lost.
type NotCachedError struct {
	URL      string // redacted
	Revision string
}

func (e *NotCachedError) Error() string {
	return fmt.Sprintf("revision %s of %s is not in the cache", e.Revision, e.URL)
}

// revisionPattern reads a revision as Tree.Revision writes it for a fetched
// tree: an optional "<branch or tag>@", the algorithm and the full hash.
var revisionPattern = regexp.MustCompile(`^(?:(.+)@)?(sha1:[0-9a-f]{40}|sha256:[0-9a-f]{64})$`)

// OpenCached reads a revision that an earlier Fetch of req.URL brought into
// req.CacheDir, without reaching the server. revision is a Tree.Revision of
// such a fetch ("main@sha1:<hex>", "v1.2.0@sha1:<hex>", "sha1:<hex>"); the
// tree returned has that same revision.
//
// It is how the reconciler keeps the last good revision at hand while the
// server is unreachable or refuses the credentials: a failed Fetch never
// removes what the cache holds, so drift can still be corrected against the
// revision last applied. A revision the cache does not hold fails with a
// *NotCachedError; a malformed one with a plain error.
func OpenCached(ctx context.Context, req FetchRequest, revision string) (*Tree, error) {
	u, err := parseRemoteURL(req.URL)
	if err != nil {
		return nil, err
	}
	m := revisionPattern.FindStringSubmatch(revision)
	if m == nil {
		return nil, fmt.Errorf("read %s from the cache: %q is not a fetched revision", u.redacted, revision)
	}
	_, hex, _ := strings.Cut(m[2], ":")
	name, hash := m[1], plumbing.NewHash(hex)
	subdir, err := CleanPath(req.Path)
	if err != nil {
		return nil, fmt.Errorf("read %s from the cache: %w", u.redacted, err)
	}
	if req.CacheDir == "" {
		return nil, fmt.Errorf("read %s from the cache: no cache directory", u.redacted)
	}
	// A branch or tag is fetched into the shallow cache, a commit into the full one;
	// the revision may have come from either.
	for _, shallow := range []bool{true, false} {
		dir := filepath.Join(req.CacheDir, cacheName(u, shallow))
		tree, err := openCachedIn(ctx, dir, u, name, hash, subdir, req.Limits, req.Blobs)
		if errors.Is(err, errNotInCache) {
			continue
		}
		var notFound *PathNotFoundError
		if err != nil && !errors.As(err, &notFound) {
			return nil, fmt.Errorf("read %s of %s from the cache: %w", revision, u.redacted, err)
		}
		return tree, err
	}
	return nil, &NotCachedError{URL: u.redacted, Revision: revision}
}

var errNotInCache = errors.New("not in this cache repository")

func openCachedIn(ctx context.Context, dir string, u *remoteURL, name string, hash plumbing.Hash, subdir string, lim Limits, blobs *Blobs) (*Tree, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, errNotInCache
	}
	// The lock keeps a concurrent Fetch from rewriting the repository while it is read.
	unlock, err := lockCache(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return nil, errNotInCache
	}
	commit, err := repo.CommitObject(hash)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, errNotInCache
	}
	if err != nil {
		return nil, err
	}
	return readFetched(repo, u, name, commit, subdir, lim, blobs)
}
