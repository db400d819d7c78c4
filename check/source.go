package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/olmsync/olmsync/sources"
)

// Source names a repository the way the CLI takes it: a folder or a URL, and a revision.
type Source struct {
	// Location is a folder (a working tree, a folder in one, or a bare repository) or a
	// repository URL (https, ssh, file, or git's user@host:path); "" is the current folder.
	Location string
	// Ref is the revision. For a folder: anything git rev-parse takes that go-git
	// supports (a branch, a tag, a hash, HEAD~1), read from the object store; empty reads
	// the folder as it is on disk, uncommitted changes included. For a URL: a branch, a
	// tag, or a full commit hash; empty is the remote's default branch.
	Ref string
	// CacheDir keeps fetched repositories; sources.DefaultCacheDir() when empty.
	CacheDir string
	// Getenv reads the environment for credentials (sources.CredentialsFromEnv); os.Getenv
	// when nil.
	Getenv func(string) string
	Limits sources.Limits
	// Blobs, when set, is shared by every revision opened from the source and its At
	// copies: the files they have in common are read and held once (check.Change sets it
	// for a pull request's base and head).
	Blobs *sources.Blobs
}

// IsRemote reports whether the source is a repository URL rather than a folder: any
// scheme:// counts, so that an unsupported scheme is refused as a URL (redacted) instead
// of being looked for, credentials and all, as a folder.
func (s Source) IsRemote() bool {
	return sources.IsRemoteURL(s.Location) || sources.LooksLikeURL(s.Location)
}

// At is the same repository at another revision (a pull request's base).
func (s Source) At(ref string) Source {
	s.Ref = ref
	return s
}

// Open brings the revision to the checker as a read-only tree confined to the repository.
// A working tree's Dirty and Revision are known once its Settle returns (Run calls it).
func (s Source) Open(ctx context.Context) (*sources.Tree, error) {
	if !s.IsRemote() {
		dir := s.Location
		if dir == "" {
			dir = "."
		}
		if s.Ref == "" {
			// Its git status runs on while the tree is rendered; Run settles it.
			return sources.StartWorkTree(dir, s.Limits)
		}
		return sources.OpenRevisionSharing(dir, s.Ref, s.Limits, s.Blobs)
	}
	cache := s.CacheDir
	if cache == "" {
		var err error
		if cache, err = sources.DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	creds, err := sources.CredentialsFromEnv(s.Location, getenv)
	if err != nil {
		return nil, err
	}
	req := sources.FetchRequest{URL: s.Location, Credentials: creds, CacheDir: cache, Limits: s.Limits, Blobs: s.Blobs}
	var tree *sources.Tree
	var unknown *sources.UnknownRefError
	for _, ref := range remoteRefs(s.Ref) {
		req.Ref = ref
		if tree, err = sources.Fetch(ctx, req); !errors.As(err, &unknown) {
			break // fetched, or failed for another reason than an unknown ref
		}
	}
	switch {
	case err == nil:
		return tree, nil
	case errors.As(err, &unknown) && s.Ref != "" && !fullHash.MatchString(s.Ref):
		return nil, fmt.Errorf("open %s: no branch or tag %q: %w", sources.RedactURL(s.Location), s.Ref, err)
	}
	return nil, fmt.Errorf("open %s: %w", sources.RedactURL(s.Location), err)
}

var fullHash = regexp.MustCompile(`^[0-9a-f]{40}$|^[0-9a-f]{64}$`)

// remoteRefs are the refs a revision of a remote repository may be, in the order they
// are tried: a full hash is a commit; a name is a branch, else a tag.
func remoteRefs(rev string) []sources.Ref {
	switch {
	case rev == "":
		return []sources.Ref{{}}
	case fullHash.MatchString(rev):
		return []sources.Ref{{Commit: rev}}
	}
	return []sources.Ref{{Branch: rev}, {Tag: rev}}
}
