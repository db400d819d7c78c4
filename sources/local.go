package sources

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// OpenRevision reads a committed revision of the repository that holds dir,
// straight from its object store into memory: no checkout, no git binary.
// rev is anything git's rev-parse takes for a commit that go-git supports: a
// branch, a tag, a full or short hash, "HEAD", "HEAD~1", "main^2".
//
// When dir is a subdirectory of the working tree, the tree holds that
// subdirectory of the commit and is confined to it, as OpenWorkTree(dir) is.
// dir may also be a bare repository.
func OpenRevision(dir, rev string, lim Limits) (*Tree, error) {
	return OpenRevisionSharing(dir, rev, lim, nil)
}

// OpenRevisionSharing is OpenRevision reading the revision's files through blobs, which
// the other revisions opened with it share (a pull request's base and head).
func OpenRevisionSharing(dir, rev string, lim Limits, blobs *Blobs) (*Tree, error) {
	root, err := realDir(dir)
	if err != nil {
		return nil, err
	}
	repo, err := openLocalRepository(root)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, &NotRepositoryError{Source: dir}
	}
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", dir, err)
	}
	subdir, err := subdirInWorkTree(repo, root)
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", dir, err)
	}
	hash, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, &UnknownRefError{Source: dir, Ref: fmt.Sprintf("revision %q", rev), Detail: unknownRevisionDetail(err)}
	}
	commit, err := repo.CommitObject(*hash)
	if err != nil {
		return nil, fmt.Errorf("read commit %s of %s: %w", hash, dir, err)
	}
	objects, closeObjects := readStorage(repo, lim.maxFileSize())
	defer closeObjects()
	fsys, err := commitTree(objects, commit, subdir, lim.maxFileSize(), blobs)
	if err != nil {
		return nil, fmt.Errorf("read revision %q of %s: %w", rev, dir, err)
	}
	state := gitState{name: revisionRefName(repo, rev, *hash), commit: hash.String()}
	return &Tree{FS: fsys, Root: fsys.root, Revision: state.revision(), Commit: state.commit, CommitMeta: commitMetaOf(commit),
		Source: dir, RepoURL: remoteURLOf(repo), RepoPath: subdir}, nil
}

// unknownRevisionDetail says why go-git could not resolve a revision, when
// its error says more than "not found".
func unknownRevisionDetail(err error) string {
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound), errors.Is(err, plumbing.ErrObjectNotFound):
		return ""
	case errors.Is(err, io.EOF):
		// ResolveRevision walked past the first commit ("HEAD~20").
		return "the history is not that long"
	}
	return err.Error()
}

// openLocalRepository opens the repository at dir — a bare repository or a
// working tree's top — or else the working tree dir is inside.
func openLocalRepository(dir string) (*git.Repository, error) {
	// Without detection first: detection looks for a ".git" in dir and its
	// parents and would pass a bare repository by.
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if !errors.Is(err, git.ErrRepositoryNotExists) {
		return repo, err
	}
	return git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
}

// subdirInWorkTree returns dir relative to the working tree's top,
// slash-separated ("" at the top or in a bare repository).
func subdirInWorkTree(repo *git.Repository, dir string) (string, error) {
	wt, err := repo.Worktree()
	if errors.Is(err, git.ErrIsBareRepository) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	top, err := filepath.EvalSymlinks(wt.Filesystem.Root())
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(top, dir)
	if err != nil {
		return "", err
	}
	if rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// The top itself, or a git directory kept outside the working tree
		// (a linked worktree's): the whole repository.
		return "", nil
	}
	return filepath.ToSlash(rel), nil
}

// revisionRefName returns the short name of the branch, tag or remote branch
// rev names when it names one that points at hash ("" for a hash, "HEAD~1"
// and the like), so that the revision reads "main@sha1:…".
func revisionRefName(repo *git.Repository, rev string, hash plumbing.Hash) string {
	if rev == string(plumbing.HEAD) {
		head, err := repo.Reference(plumbing.HEAD, false)
		if err != nil || head.Type() != plumbing.SymbolicReference || !head.Target().IsBranch() {
			return ""
		}
		return head.Target().Short()
	}
	for _, rule := range plumbing.RefRevParseRules {
		name := plumbing.ReferenceName(fmt.Sprintf(rule, rev))
		if !name.IsSafe() {
			continue
		}
		ref, err := repo.Reference(name, true)
		if err != nil {
			continue
		}
		if peeled, err := peelToCommit(repo, ref.Hash()); err == nil && peeled == hash {
			return name.Short()
		}
	}
	return ""
}

// peelToCommit follows annotated tags down to the commit they name.
func peelToCommit(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for range maxSymlinkHops {
		tag, err := repo.TagObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return h, nil
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		h = tag.Target
	}
	return plumbing.ZeroHash, fmt.Errorf("tag chain at %s is too long", h)
}

// gitState is what a tree knows of git: the ref it was read at (if named),
// the commit, and whether the files differ from it.
type gitState struct {
	name   string
	commit string
	dirty  bool
	// remoteURL and subdir are the working tree's remote URL (remoteURLOf) and
	// the folder's path inside it.
	remoteURL string
	subdir    string
}

// remoteURLOf is the URL of the repository's remote "origin", else of its only
// remote, without userinfo (a CI checkout's token); "" when it has neither.
func remoteURLOf(repo *git.Repository) string {
	remote, err := repo.Remote(git.DefaultRemoteName)
	if err != nil {
		remotes, lerr := repo.Remotes()
		if lerr != nil || len(remotes) != 1 {
			return ""
		}
		remote = remotes[0]
	}
	if urls := remote.Config().URLs; len(urls) > 0 {
		return withoutUserinfo(urls[0])
	}
	return ""
}

// withoutUserinfo removes "user:password@" from a URL with a scheme; an scp-like
// address ("git@host:org/repo") has no password and is kept.
func withoutUserinfo(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	host := rest
	if slash := strings.Index(rest, "/"); slash >= 0 {
		host = rest[:slash]
	}
	if at := strings.LastIndex(host, "@"); at >= 0 {
		rest = rest[at+1:]
	}
	return scheme + "://" + rest
}

func (s gitState) revision() string {
	algo := "sha1"
	if len(s.commit) == 64 {
		algo = "sha256"
	}
	rev := algo + ":" + s.commit
	if s.name != "" {
		rev = s.name + "@" + rev
	}
	if s.dirty {
		rev += "+dirty"
	}
	return rev
}

// workTreeState describes the git state of the working tree holding dir:
// HEAD's branch and commit at once, and a function that tells whether anything
// under dir differs from it (worktreeDirty), the one slow part. It is nil when
// dir is not in a git working tree or HEAD has no commit yet.
func workTreeState(dir string) (*gitState, func() (bool, error), error) {
	repo, err := openLocalRepository(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	wt, err := repo.Worktree()
	if errors.Is(err, git.ErrIsBareRepository) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	subdir, err := subdirInWorkTree(repo, dir)
	if err != nil {
		return nil, nil, err
	}
	s := &gitState{commit: head.Hash().String(), remoteURL: remoteURLOf(repo), subdir: subdir}
	if head.Name().IsBranch() {
		s.name = head.Name().Short()
	}
	dirty := func() (bool, error) { return worktreeDirty(repo, wt, subdir, head.Hash()) }
	return s, dirty, nil
}

func inSubdir(file, subdir string) bool {
	return subdir == "" || file == subdir || strings.HasPrefix(file, subdir+"/")
}
