package sources

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// FetchRequest says what to fetch and where to keep it.
type FetchRequest struct {
	// URL is the repository: https://, http://, ssh://, file:// or
	// user@host:path. Credentials in it are used when Credentials is nil,
	// and are never written to the cache or shown.
	URL string
	Ref Ref
	// Credentials authenticate to the server; nil for none.
	Credentials *Credentials
	// CacheDir holds one bare repository per URL (DefaultCacheDir for the
	// CLI; a volume for the reconciler). Later fetches of the same URL only
	// bring what changed.
	CacheDir string
	Limits   Limits
	// Blobs, when set, is shared with the other revisions read with it (a pull request's
	// base and head): the files they have in common are inflated and held once.
	Blobs *Blobs
	// AllowInsecureHTTP lets credentials go to an http:// URL.
	AllowInsecureHTTP bool
	// Path confines the tree to a folder of the repository (slash-separated,
	// relative to its root; "" or "." is the root): nothing outside it can be
	// read, olmsync.yaml included. A path leaving the repository fails with a
	// *PathEscapeError before anything is fetched; a folder the revision does
	// not hold fails with a *PathNotFoundError once it is fetched.
	Path string
}

// remoteName is the only remote of a cache repository.
const remoteName = "origin"

// DefaultCacheDir is where the CLI keeps fetched repositories: the user's
// cache directory, under olmsync/git.
func DefaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the cache directory: %w", err)
	}
	return filepath.Join(dir, "olmsync", "git"), nil
}

// Fetch brings the revision req.Ref names from the remote repository into a
// bare repository under req.CacheDir and reads it into an in-memory tree.
//
// A branch, tag or semver range is fetched shallow (depth 1), and not at all
// when the cache already holds the commit the server advertises; a commit is
// fetched with full history once, then read from the cache without asking
// the server again. The context's deadline bounds the network work.
//
// Failures are typed: *UnreachableError, *AuthError, *NotRepositoryError,
// *UnknownRefError; a bad Ref fails Ref.Validate. Nothing secret is in any
// message. Concurrent fetches of one URL into one cache wait for each other,
// in this process and across processes.
func Fetch(ctx context.Context, req FetchRequest) (*Tree, error) {
	u, err := parseRemoteURL(req.URL)
	if err != nil {
		return nil, err
	}
	if err := req.Ref.Validate(); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.redacted, err)
	}
	subdir, err := CleanPath(req.Path)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.redacted, err)
	}
	if req.CacheDir == "" {
		return nil, fmt.Errorf("fetch %s: no cache directory", u.redacted)
	}
	creds := req.Credentials
	if creds == nil && (u.scheme == "https" || u.scheme == "http") && (u.user != "" || u.password != "") {
		creds = &Credentials{Username: u.user, Password: u.password}
	}
	auth, release, err := creds.transportAuth(ctx, u, req.AllowInsecureHTTP)
	if err != nil {
		return nil, err
	}
	defer release()

	f := &fetcher{
		url:     u,
		ref:     req.Ref,
		auth:    auth,
		secrets: append(u.secrets(), creds.secrets()...),
	}
	if creds != nil {
		f.caBundle = creds.CABundle
	}
	if u.scheme == "ssh" {
		var done func()
		f.proxy, done = sshContextProxy(ctx)
		defer done()
	}
	dir := filepath.Join(req.CacheDir, cacheName(u, f.shallow()))
	unlock, err := lockCache(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.redacted, err)
	}
	defer unlock()

	name, commit, err := f.intoCache(ctx, dir)
	if err != nil {
		return nil, err
	}
	return readFetched(f.repo, u, name, commit, subdir, req.Limits, req.Blobs)
}

// readFetched reads a commit of a cache repository, or its folder subdir, into a tree.
func readFetched(repo *git.Repository, u *remoteURL, name string, commit *object.Commit, subdir string, lim Limits, blobs *Blobs) (*Tree, error) {
	state := gitState{name: name, commit: commit.Hash.String()}
	objects, closeObjects := readStorage(repo, lim.maxFileSize())
	defer closeObjects()
	fsys, err := commitTree(objects, commit, subdir, lim.maxFileSize(), blobs)
	if errors.Is(err, fs.ErrNotExist) && subdir != "" {
		return nil, &PathNotFoundError{Source: u.redacted, Path: subdir, Revision: state.revision()}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s of %s: %w", state.revision(), u.redacted, err)
	}
	return &Tree{FS: fsys, Root: fsys.root, Revision: state.revision(), Commit: state.commit, CommitMeta: commitMetaOf(commit),
		Source: u.redacted, RepoURL: withoutUserinfo(u.redacted), RepoPath: subdir}, nil
}

// CleanPath checks a folder of a repository given as a relative path and returns it clean
// and slash-separated, "" for the root. A leading "./" or "/" is allowed (both mean the
// repository root, as in Flux's spec.path); ".." that would leave the root is a
// *PathEscapeError.
func CleanPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	clean := path.Clean("/" + filepath.ToSlash(p))
	if slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..") {
		return "", &PathEscapeError{Path: p}
	}
	return strings.TrimPrefix(clean, "/"), nil
}

// cacheName is a cache repository's directory name: readable, unique per
// URL (secrets removed) and per depth, since go-git cannot deepen a shallow
// repository.
func cacheName(u *remoteURL, shallow bool) string {
	sum := sha256.Sum256([]byte(u.stored))
	readable := strings.Trim(unsafeNameChars.ReplaceAllString(u.host+"-"+filepath.Base(u.stored), "-"), "-.")
	if len(readable) > 60 {
		readable = readable[:60]
	}
	depth := "full"
	if shallow {
		depth = "shallow"
	}
	return fmt.Sprintf("%s-%s-%s", readable, hex.EncodeToString(sum[:8]), depth)
}

var unsafeNameChars = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// fetcher does one Fetch's git work.
type fetcher struct {
	url      *remoteURL
	ref      Ref
	auth     transport.AuthMethod
	caBundle []byte
	proxy    transport.ProxyOptions // ssh only: see ssh_dial.go
	secrets  []string
	repo     *git.Repository
}

// shallow is true when the ref names a tip the server advertises; a commit
// may be anywhere in the history.
func (f *fetcher) shallow() bool { return f.ref.Commit == "" }

// intoCache updates the cache repository at dir and returns the ref name for
// the revision ("" for a bare commit) and the commit. When a fetch fails for
// a reason that is not the server's and the cache turns out unreadable
// (objects lost or corrupted by an interrupted write), the cache is thrown
// away and fetched again from scratch, once. A failure of the server never
// throws the cache away: it holds the last good revision.
func (f *fetcher) intoCache(ctx context.Context, dir string) (string, *object.Commit, error) {
	name, commit, err := f.tryIntoCache(ctx, dir)
	if err == nil || ctx.Err() != nil || isServerFailure(err) || f.repo == nil || cacheReadable(f.repo) {
		return name, commit, err
	}
	if rmErr := os.RemoveAll(dir); rmErr != nil {
		return "", nil, fmt.Errorf("fetch %s: reset broken cache after %w: %w", f.url.redacted, err, rmErr)
	}
	return f.tryIntoCache(ctx, dir)
}

// isServerFailure is true for the failures a fresh clone would meet again.
func isServerFailure(err error) bool {
	var (
		unreachable *UnreachableError
		auth        *AuthError
		notRepo     *NotRepositoryError
		unknown     *UnknownRefError
	)
	return errors.As(err, &unreachable) || errors.As(err, &auth) || errors.As(err, &notRepo) || errors.As(err, &unknown)
}

// cacheReadable reads the commit and root tree every ref of the cache points
// at: the objects a fetch needs to tell the server what it has.
func cacheReadable(repo *git.Repository) bool {
	refs, err := repo.References()
	if err != nil {
		return false
	}
	defer refs.Close()
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference {
			return nil
		}
		h, err := peelToCommit(repo, ref.Hash())
		if err != nil {
			return err
		}
		commit, err := repo.CommitObject(h)
		if err != nil {
			return err
		}
		_, err = commit.Tree()
		return err
	})
	return err == nil
}

func (f *fetcher) tryIntoCache(ctx context.Context, dir string) (string, *object.Commit, error) {
	repo, err := openCache(dir, f.url.stored)
	if err != nil {
		return "", nil, fmt.Errorf("fetch %s: cache %s: %w", f.url.redacted, dir, err)
	}
	f.repo = repo
	if f.ref.Commit != "" {
		return f.fetchCommit(ctx)
	}
	return f.fetchTip(ctx)
}

// openCache opens the bare cache repository at dir, creating it (with its
// one remote) when missing or unreadable.
func openCache(dir, cleanURL string) (*git.Repository, error) {
	repo, err := git.PlainOpen(dir)
	if err == nil {
		if remote, rerr := repo.Remote(remoteName); rerr == nil && len(remote.Config().URLs) == 1 && remote.Config().URLs[0] == cleanURL {
			return repo, nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, err
	}
	repo, err = git.PlainInit(dir, true)
	if err != nil {
		return nil, err
	}
	_, err = repo.CreateRemote(&config.RemoteConfig{Name: remoteName, URLs: []string{cleanURL}})
	return repo, err
}

// fetchTip fetches the branch, tag or semver-selected tag the server
// advertises, shallow, unless the cache already has that commit.
func (f *fetcher) fetchTip(ctx context.Context) (string, *object.Commit, error) {
	target, err := f.remoteTarget(ctx)
	if err != nil {
		return "", nil, err
	}
	if !f.hasRef(target) {
		spec := config.RefSpec(fmt.Sprintf("+%s:%s", target.Name(), target.Name()))
		if err := f.fetch(ctx, []config.RefSpec{spec}, 1); err != nil {
			return "", nil, err
		}
	}
	local, err := f.repo.Reference(target.Name(), true)
	if err != nil {
		return "", nil, fmt.Errorf("fetch %s: %s is missing after the fetch: %w", f.url.redacted, target.Name(), err)
	}
	commit, err := f.commit(local.Hash())
	if err != nil {
		return "", nil, fmt.Errorf("fetch %s: read %s at %s: %w", f.url.redacted, target.Name(), local.Hash(), err)
	}
	return target.Name().Short(), commit, nil
}

// hasRef is true when the cache's ref already points where the server's
// does and the objects are there: no fetch needed.
func (f *fetcher) hasRef(target *plumbing.Reference) bool {
	local, err := f.repo.Reference(target.Name(), true)
	if err != nil || local.Hash() != target.Hash() {
		return false
	}
	_, err = f.commit(local.Hash())
	return err == nil
}

// fetchCommit reads a pinned commit from the cache, fetching the branch (or
// every branch and tag) with full history only when it is not there yet.
func (f *fetcher) fetchCommit(ctx context.Context) (string, *object.Commit, error) {
	hash := plumbing.NewHash(f.ref.Commit)
	if commit, err := f.commit(hash); err == nil {
		return f.ref.Branch, commit, nil
	}
	specs := []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}
	if f.ref.Branch != "" {
		name := plumbing.NewBranchReferenceName(f.ref.Branch)
		specs = []config.RefSpec{config.RefSpec(fmt.Sprintf("+%s:%s", name, name))}
	}
	if err := f.fetch(ctx, specs, 0); err != nil {
		return "", nil, err
	}
	commit, err := f.commit(hash)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", nil, &UnknownRefError{Source: f.url.redacted, Ref: f.ref.String()}
	}
	if err != nil {
		return "", nil, err
	}
	return f.ref.Branch, commit, nil
}

// commit returns the commit h names, through annotated tags.
func (f *fetcher) commit(h plumbing.Hash) (*object.Commit, error) {
	c, err := peelToCommit(f.repo, h)
	if err != nil {
		return nil, err
	}
	return f.repo.CommitObject(c)
}

// remote is the cache's remote with the URL go-git fetches from, query included: the
// cache's config holds the URL without it (openCache), so that no token is written to disk.
func (f *fetcher) remote() *git.Remote {
	return git.NewRemote(f.repo.Storer, &config.RemoteConfig{Name: remoteName, URLs: []string{f.url.clean}})
}

// fetch runs one fetch; depth 0 is full history.
func (f *fetcher) fetch(ctx context.Context, specs []config.RefSpec, depth int) error {
	err := f.remote().FetchContext(ctx, &git.FetchOptions{
		RemoteName:   remoteName,
		RefSpecs:     specs,
		Depth:        depth,
		Auth:         f.auth,
		Tags:         git.NoTags,
		Force:        true,
		CABundle:     f.caBundle,
		ProxyOptions: f.proxy,
	})
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
		return nil
	case errors.Is(err, git.NoMatchingRefSpecError{}):
		// The ref went away between listing and fetching.
		return &UnknownRefError{Source: f.url.redacted, Ref: f.ref.String()}
	}
	return f.remoteError(ctx, err)
}

// remoteError types a failed network operation. When the context ended, the
// transport's own error ("use of closed network connection") hides why, so
// the context's error goes in front.
func (f *fetcher) remoteError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%w)", ctxErr, err)
	}
	return classifyRemoteError(f.url.redacted, err, f.secrets)
}

// remoteTarget lists the server's refs and picks the one the Ref names.
func (f *fetcher) remoteTarget(ctx context.Context) (*plumbing.Reference, error) {
	refs, err := f.remote().ListContext(ctx, &git.ListOptions{Auth: f.auth, CABundle: f.caBundle, ProxyOptions: f.proxy})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return nil, &UnknownRefError{Source: f.url.redacted, Ref: f.ref.String(), Detail: "the repository is empty"}
	}
	if err != nil {
		return nil, f.remoteError(ctx, err)
	}
	return pickRemoteRef(refs, f.ref, f.url.redacted)
}

// pickRemoteRef chooses among advertised refs: the branch or tag named, the
// highest tag in the semver range, or the branch HEAD points at.
func pickRemoteRef(refs []*plumbing.Reference, ref Ref, source string) (*plumbing.Reference, error) {
	byName := make(map[plumbing.ReferenceName]*plumbing.Reference, len(refs))
	var tags []string
	for _, r := range refs {
		byName[r.Name()] = r
		if r.Name().IsTag() {
			tags = append(tags, r.Name().Short())
		}
	}
	var want plumbing.ReferenceName
	switch {
	case ref.Tag != "":
		want = plumbing.NewTagReferenceName(ref.Tag)
	case ref.SemVer != "":
		tag, err := selectSemverTag(tags, ref.SemVer)
		if err != nil {
			return nil, err
		}
		if tag == "" {
			return nil, &UnknownRefError{Source: source, Ref: fmt.Sprintf("a tag in %s", ref), Detail: fmt.Sprintf("none of %d tags matches", len(tags))}
		}
		want = plumbing.NewTagReferenceName(tag)
	case ref.Branch != "":
		want = plumbing.NewBranchReferenceName(ref.Branch)
	default:
		head, ok := byName[plumbing.HEAD]
		if !ok || head.Type() != plumbing.SymbolicReference {
			return nil, &UnknownRefError{Source: source, Ref: ref.String(), Detail: "the server does not say which branch HEAD is"}
		}
		want = head.Target()
	}
	r, ok := byName[want]
	if !ok || r.Type() != plumbing.HashReference {
		return nil, &UnknownRefError{Source: source, Ref: ref.String()}
	}
	return r, nil
}
