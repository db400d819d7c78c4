package sources

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Relation is how a revision relates to another one of the same repository.
type Relation string

// The relations CompareRevisions tells.
const (
	// Same: the two revisions are one commit.
	Same Relation = "Same"
	// FastForward: the new revision descends from the old one.
	FastForward Relation = "FastForward"
	// Backward: the new revision is an ancestor of the old one (a branch reset, or
	// force-pushed, to an older commit).
	Backward Relation = "Backward"
	// Unrelated: neither descends from the other (a force-push of another history).
	Unrelated Relation = "Unrelated"
	// Unknown: the history between them is not in the cache, so which it is cannot be
	// told. Branches and tags are fetched shallow: a commit's parents are in the cache
	// only when an earlier fetch brought them as a tip of their own.
	Unknown Relation = "Unknown"
)

// maxHistoryWalk bounds the commits read from the cache to relate two revisions, so
// that a long history costs a bounded amount of reading.
const maxHistoryWalk = 10000

// CompareRevisions tells how the revision to relates to the revision from, both
// Tree.Revisions of earlier Fetches of req.URL into req.CacheDir, reading only the cache
// and never the server. It walks the parents each cache repository holds: what it
// cannot reach is Unknown, never a guess.
func CompareRevisions(ctx context.Context, req FetchRequest, from, to string) (Relation, error) {
	u, err := parseRemoteURL(req.URL)
	if err != nil {
		return Unknown, err
	}
	fromHash, err := revisionHash(from)
	if err != nil {
		return Unknown, fmt.Errorf("relate revisions of %s: %w", u.redacted, err)
	}
	toHash, err := revisionHash(to)
	if err != nil {
		return Unknown, fmt.Errorf("relate revisions of %s: %w", u.redacted, err)
	}
	if fromHash == toHash {
		return Same, nil
	}
	if req.CacheDir == "" {
		return Unknown, fmt.Errorf("relate revisions of %s: no cache directory", u.redacted)
	}
	// A branch or tag is in the shallow cache, a pinned commit in the full one; the two
	// revisions may be in either, and are related only within one.
	for _, shallow := range []bool{false, true} {
		rel, err := compareIn(ctx, filepath.Join(req.CacheDir, cacheName(u, shallow)), fromHash, toHash)
		if err != nil {
			return Unknown, fmt.Errorf("relate revisions of %s: %w", u.redacted, err)
		}
		if rel != Unknown {
			return rel, nil
		}
	}
	return Unknown, nil
}

func revisionHash(revision string) (plumbing.Hash, error) {
	m := revisionPattern.FindStringSubmatch(revision)
	if m == nil {
		return plumbing.ZeroHash, fmt.Errorf("%q is not a fetched revision", revision)
	}
	_, hex, _ := strings.Cut(m[2], ":")
	return plumbing.NewHash(hex), nil
}

func compareIn(ctx context.Context, dir string, from, to plumbing.Hash) (Relation, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return Unknown, nil
	}
	unlock, err := lockCache(ctx, dir)
	if err != nil {
		return Unknown, err
	}
	defer unlock()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return Unknown, nil
	}
	toAncestors, toComplete, err := ancestors(repo, to)
	if err != nil || toAncestors == nil {
		return Unknown, err
	}
	if toAncestors[from] {
		return FastForward, nil
	}
	fromAncestors, fromComplete, err := ancestors(repo, from)
	if err != nil || fromAncestors == nil {
		return Unknown, err
	}
	switch {
	case fromAncestors[to]:
		return Backward, nil
	case toComplete && fromComplete:
		return Unrelated, nil
	}
	return Unknown, nil
}

// ancestors are the commits reachable from h that the repository holds, h included, and
// whether that is all of them (no parent missing, no more than maxHistoryWalk). Nil when
// the repository does not hold h.
func ancestors(repo *git.Repository, h plumbing.Hash) (map[plumbing.Hash]bool, bool, error) {
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{h}
	complete := true
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		if seen[next] {
			continue
		}
		if len(seen) >= maxHistoryWalk {
			return seen, false, nil
		}
		c, err := repo.CommitObject(next)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			if next == h {
				return nil, false, nil
			}
			complete = false // a shallow boundary: the parent was never fetched
			continue
		}
		if err != nil {
			return nil, false, err
		}
		seen[next] = true
		queue = append(queue, c.ParentHashes...)
	}
	return seen, complete, nil
}
