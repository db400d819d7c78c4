package sources

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// maxLinkTarget bounds a symlink's stored target; PATH_MAX is 4096 on Linux.
const maxLinkTarget = 4096

// memRoot is where an in-memory tree's repository root lies. It is not "/"
// on purpose: a path that climbs above it ("/repo/apps/../../../etc") stays
// visibly outside instead of being clamped back into the tree at "/".
const memRoot = "/repo"

// readStorage reopens a repository's object store for reading a whole tree
// at once: pack files stay open from one object to the next (go-git
// otherwise reopens the pack for every object, which made reading a packed
// commit of 3,000 files several times slower), and a blob over maxFileSize
// comes back as a lazy handle instead of being inflated into memory. The
// returned func closes what it kept open.
func readStorage(repo *git.Repository, maxFileSize int64) (storer.EncodedObjectStorer, func()) {
	fsStore, ok := repo.Storer.(*filesystem.Storage)
	if !ok {
		return repo.Storer, func() {}
	}
	s := filesystem.NewStorageWithOptions(fsStore.Filesystem(), cache.NewObjectLRUDefault(), filesystem.Options{
		KeepDescriptors:      true,
		LargeObjectThreshold: maxFileSize,
	})
	return s, func() { _ = s.Close() }
}

// commitTree reads the tree of commit (or its subtree at subdir, a
// slash-separated path) from the object store into a confined in-memory
// filesystem rooted at memRoot. Files over maxFileSize are kept as entries
// without content, so listing works and reading says why it cannot.
func commitTree(objects storer.EncodedObjectStorer, commit *object.Commit, subdir string, maxFileSize int64, blobs *Blobs) (*confinedFS, error) {
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree of commit %s: %w", commit.Hash, err)
	}
	if subdir != "" && subdir != "." {
		tree, err = tree.Tree(subdir)
		if errors.Is(err, object.ErrDirectoryNotFound) {
			return nil, &fs.PathError{Op: "open", Path: subdir, Err: fs.ErrNotExist}
		}
		if err != nil {
			return nil, fmt.Errorf("read directory %q of commit %s: %w", subdir, commit.Hash, err)
		}
	}
	root := filepath.FromSlash(memRoot)
	b := newMemBackend(root, commit.Committer.When)
	r := treeReader{objects: objects, b: b, maxFileSize: maxFileSize, blobs: blobs}
	if err := r.readTree(tree, root, ""); err != nil {
		return nil, err
	}
	b.seal()
	return &confinedFS{root: root, b: b, maxFileSize: maxFileSize}, nil
}

type treeReader struct {
	objects     storer.EncodedObjectStorer
	b           *memBackend
	maxFileSize int64
	blobs       *Blobs // shared with the other trees opened with it; nil for none
}

// readTree adds the entries of tree under dir; rel is dir relative to the
// tree's root, for messages.
func (r *treeReader) readTree(tree *object.Tree, dir, rel string) error {
	for _, e := range tree.Entries {
		entryRel := path.Join(rel, e.Name)
		if strings.EqualFold(e.Name, gitDir) {
			// git refuses to check such an entry out; so do we, silently.
			continue
		}
		if !validEntryName(e.Name) {
			return fmt.Errorf("commit holds an invalid file name %q in directory %q", e.Name, "/"+rel)
		}
		p := filepath.Join(dir, e.Name)
		if err := r.readEntry(e, p, entryRel); err != nil {
			return err
		}
	}
	return nil
}

func (r *treeReader) readEntry(e object.TreeEntry, p, rel string) error {
	switch e.Mode {
	case filemode.Dir:
		sub, err := object.GetTree(r.objects, e.Hash)
		if err != nil {
			return fmt.Errorf("read directory %q: %w", rel, err)
		}
		r.b.add(p, &memNode{mode: fs.ModeDir | 0o755})
		return r.readTree(sub, p, rel)
	case filemode.Regular, filemode.Deprecated:
		return r.readFile(e.Hash, p, rel, 0o644)
	case filemode.Executable:
		return r.readFile(e.Hash, p, rel, 0o755)
	case filemode.Symlink:
		return r.readLink(e.Hash, p, rel)
	default:
		// A submodule (gitlink) has no content in this repository; like a
		// clone without --recurse-submodules, it is absent.
		return nil
	}
}

func (r *treeReader) readFile(h plumbing.Hash, p, rel string, perm fs.FileMode) error {
	size, data, err := r.blobs.read(h, r.maxFileSize, func() (int64, []byte, error) {
		obj, err := r.objects.EncodedObject(plumbing.BlobObject, h)
		if err != nil {
			return 0, nil, err
		}
		// Over the bound, obj is a lazy handle (see readStorage): its size is
		// known, its content never inflated.
		if obj.Size() > r.maxFileSize {
			return obj.Size(), nil, nil
		}
		data, err := readObject(obj)
		return obj.Size(), data, err
	})
	if err != nil {
		return fmt.Errorf("read file %q: %w", rel, err)
	}
	r.b.add(p, &memNode{mode: perm, size: size, data: data})
	return nil
}

func (r *treeReader) readLink(h plumbing.Hash, p, rel string) error {
	obj, err := r.objects.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return fmt.Errorf("read symlink %q: %w", rel, err)
	}
	if obj.Size() > maxLinkTarget {
		return fmt.Errorf("symlink %q has a target of %d bytes, over %d", rel, obj.Size(), maxLinkTarget)
	}
	target, err := readObject(obj)
	if err != nil {
		return fmt.Errorf("read symlink %q: %w", rel, err)
	}
	if len(target) == 0 || strings.ContainsRune(string(target), 0) {
		return fmt.Errorf("symlink %q has an invalid target %q", rel, target)
	}
	r.b.add(p, &memNode{mode: fs.ModeSymlink | 0o777, size: int64(len(target)), data: target})
	return nil
}

func readObject(obj plumbing.EncodedObject) ([]byte, error) {
	rc, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	data := make([]byte, obj.Size())
	if _, err := io.ReadFull(rc, data); err != nil {
		return nil, err
	}
	return data, nil
}

// validEntryName refuses names git itself would never write and that would
// move a path: empty, ".", "..", or holding a separator or NUL.
func validEntryName(name string) bool {
	return name != "" && name != "." && name != ".." &&
		!strings.ContainsAny(name, "/\x00") && !strings.ContainsRune(name, filepath.Separator)
}
