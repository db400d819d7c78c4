package sources

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// maxSymlinkHops bounds how many symlinks one path may go through, as the
// kernel's ELOOP does (40 on Linux), so a cycle ends in an error.
const maxSymlinkHops = 40

// gitDir is hidden in every tree: a committed revision never holds it, so a
// working tree must not show it either, or the two would render differently.
const gitDir = ".git"

// backend is the storage below a confinedFS: the disk or an in-memory
// snapshot of a commit. Paths are absolute and clean. It knows nothing of
// the root; confinedFS resolves every path before a backend sees it, so a
// backend is only ever asked about paths inside the root with no symlink in
// any directory component.
type backend interface {
	// lstat describes p without following it if it is a symlink.
	lstat(p string) (fs.FileInfo, error)
	// readlink returns a symlink's target as stored.
	readlink(p string) (string, error)
	// readDir lists a directory with lstat information, sorted by name.
	readDir(p string) ([]fs.FileInfo, error)
	// open opens a regular file for reading.
	open(p string) (io.ReadCloser, error)
	// absoluteLinksEscape is true when an absolute symlink target can never
	// point into the tree: in a commit, "/etc" means the reader's /etc.
	absoluteLinksEscape() bool
}

// confinedFS is the filesys.FileSystem every Tree hands out. It keeps every
// path inside root — `..`, absolute paths and symlinks (chains included) that
// lead out are refused with a *PathEscapeError — refuses files over
// maxFileSize with a *FileTooLargeError, hides .git, and is read-only. Reads
// are safe from many goroutines.
//
// Relative paths are taken relative to root, and every path it returns is
// absolute.
type confinedFS struct {
	root        string
	b           backend
	maxFileSize int64
}

var _ filesys.FileSystem = (*confinedFS)(nil)

// abs makes p absolute (relative to the root) and clean.
func (f *confinedFS) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(f.root, p)
}

// inside returns p relative to the root, and whether p is inside it at all.
// p must be absolute and clean.
func (f *confinedFS) inside(p string) (string, bool) {
	rel, err := filepath.Rel(f.root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// display names a path in messages: relative to the root when inside it.
func (f *confinedFS) display(p string) string {
	if rel, ok := f.inside(f.abs(p)); ok {
		return filepath.ToSlash(rel)
	}
	return p
}

// resolve returns the real location of p: inside the root, with every
// symlink followed. A path that does not exist resolves to where it would
// be (the callers' lstat then reports it missing).
func (f *confinedFS) resolve(p string) (string, error) {
	abs := f.abs(p)
	rel, ok := f.inside(abs)
	if !ok {
		return "", &PathEscapeError{Path: p}
	}
	pending := splitRel(rel)
	cur := f.root
	for hops := 0; len(pending) > 0; {
		name := pending[0]
		pending = pending[1:]
		if name == gitDir {
			return "", notExist(f.display(abs))
		}
		next := filepath.Join(cur, name)
		info, err := f.b.lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return filepath.Join(append([]string{next}, pending...)...), nil
		case err != nil:
			return "", err
		case info.Mode()&fs.ModeSymlink != 0:
			if hops++; hops > maxSymlinkHops {
				return "", &fs.PathError{Op: "resolve", Path: f.display(abs), Err: syscall.ELOOP}
			}
			dest, err := f.followLink(abs, next, cur)
			if err != nil {
				return "", err
			}
			// The target is resolved from the root again: it may itself go
			// through symlinks, and the rest of the path follows it.
			pending = append(dest, pending...)
			cur = f.root
		case !info.IsDir() && len(pending) > 0:
			return "", &fs.PathError{Op: "open", Path: f.display(abs), Err: syscall.ENOTDIR}
		default:
			cur = next
		}
	}
	return cur, nil
}

// followLink reads the symlink at link (in directory dir, which has no
// symlink in it) and returns its target's components relative to the root,
// or a *PathEscapeError naming the asked-for path when the target is outside.
func (f *confinedFS) followLink(asked, link, dir string) ([]string, error) {
	target, err := f.b.readlink(link)
	if err != nil {
		return nil, err
	}
	escape := &PathEscapeError{Path: f.display(asked), Link: f.display(link), Target: target}
	var dest string
	switch {
	case filepath.IsAbs(target) && f.b.absoluteLinksEscape():
		return nil, escape
	case filepath.IsAbs(target):
		dest = filepath.Clean(target)
	default:
		// dir has no symlinks, so resolving ".." lexically from it is what
		// the kernel would do.
		dest = filepath.Join(dir, target)
	}
	rel, ok := f.inside(dest)
	if !ok {
		return nil, escape
	}
	return splitRel(rel), nil
}

func splitRel(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, string(filepath.Separator))
}

func notExist(p string) error {
	return &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
}

// stat resolves p and describes what it finally names.
func (f *confinedFS) stat(p string) (string, fs.FileInfo, error) {
	real, err := f.resolve(p)
	if err != nil {
		return "", nil, err
	}
	info, err := f.b.lstat(real)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, notExist(f.display(p))
	}
	if err != nil {
		return "", nil, err
	}
	return real, info, nil
}

// checkSize refuses a file over the bound, naming the path that was asked for.
func (f *confinedFS) checkSize(p string, size int64) error {
	if size > f.maxFileSize {
		return &FileTooLargeError{Path: f.display(p), Size: size, Limit: f.maxFileSize}
	}
	return nil
}

// Exists reports whether p names something in the tree. A path through a
// symlink that leads outside the root exists (reading it fails with a
// *PathEscapeError that says why); a path lexically outside the root does not.
func (f *confinedFS) Exists(p string) bool {
	_, _, err := f.stat(p)
	var escape *PathEscapeError
	return err == nil || (errors.As(err, &escape) && escape.Link != "")
}

// IsDir reports whether p is a directory inside the root.
func (f *confinedFS) IsDir(p string) bool {
	_, info, err := f.stat(p)
	return err == nil && info.IsDir()
}

// ReadDir lists the names in directory p, sorted.
func (f *confinedFS) ReadDir(p string) ([]string, error) {
	real, info, err := f.stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: f.display(p), Err: syscall.ENOTDIR}
	}
	entries, err := f.b.readDir(real)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Name() != gitDir {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// CleanedAbs returns the directory p is or is in, with every symlink
// resolved, and the file name when p is a file — as kustomize's on-disk
// filesystem does, so its root-only load restriction compares real paths.
func (f *confinedFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	real, info, err := f.stat(p)
	if err != nil {
		return "", "", err
	}
	if info.IsDir() {
		return filesys.ConfirmedDir(real), "", nil
	}
	return filesys.ConfirmedDir(filepath.Dir(real)), filepath.Base(real), nil
}

// ReadFile returns the content of file p.
func (f *confinedFS) ReadFile(p string) ([]byte, error) {
	real, info, err := f.stat(p)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: f.display(p), Err: syscall.EISDIR}
	}
	if err := f.checkSize(p, info.Size()); err != nil {
		return nil, err
	}
	rc, err := f.b.open(real)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	return f.readBounded(p, rc, info.Size())
}

// readBounded reads all of r into a buffer of exactly the size the file was measured at
// (sizeHint), refusing more than the bound even if the file grew after it was measured.
// Exactly: a render keeps every file it read while it runs, and the 512 bytes of room to
// grow that bytes.Buffer (and os.ReadFile) leave cost more than the files themselves on a
// repository of small manifests — 0.92 MB held for 0.24 MB of files on the 300-app
// benchmark repository (issue 18). A file that turns out longer is read on; one that
// turns out shorter is copied to its size.
func (f *confinedFS) readBounded(p string, r io.Reader, sizeHint int64) ([]byte, error) {
	buf := make([]byte, max(sizeHint, 0))
	n, err := io.ReadFull(r, buf)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return joined(buf[:n]), nil // shorter than measured
	case err != nil:
		return nil, err
	}
	// A byte past the measured size means the file grew since.
	var probe [1]byte
	if m, err := io.ReadFull(r, probe[:]); m == 0 {
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		return nil, err
	}
	rest, err := io.ReadAll(io.LimitReader(r, f.maxFileSize-int64(len(buf))))
	if err != nil {
		return nil, err
	}
	data := joined(buf, probe[:], rest)
	if int64(len(data)) > f.maxFileSize {
		return nil, f.grewTooLarge(p)
	}
	return data, nil
}

// joined is the parts in one slice of exactly their length (append and slices.Concat
// round the capacity up).
func joined(parts ...[]byte) []byte {
	n := 0
	for _, part := range parts {
		n += len(part)
	}
	out := make([]byte, 0, n)
	for _, part := range parts {
		out = append(out, part...)
	}
	return out
}

// grewTooLarge is the error for a file measured under the bound that then
// turned out longer: its real size is unknown.
func (f *confinedFS) grewTooLarge(p string) error {
	return &FileTooLargeError{Path: f.display(p), Size: -1, Limit: f.maxFileSize}
}

// Open opens p for reading. A directory opens too (its Stat works, reading
// it fails), as os.Open does.
func (f *confinedFS) Open(p string) (filesys.File, error) {
	real, info, err := f.stat(p)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return &roFile{info: info, name: f.display(p)}, nil
	}
	if err := f.checkSize(p, info.Size()); err != nil {
		return nil, err
	}
	rc, err := f.b.open(real)
	if err != nil {
		return nil, err
	}
	return &roFile{info: info, name: f.display(p), rc: rc, left: f.maxFileSize, fsys: f, asked: p}, nil
}

// Glob returns the absolute paths matching pattern (filepath.Match syntax,
// relative patterns taken from the root), sorted, without hidden files
// unless the pattern names them — what kustomize's filesystems do.
func (f *confinedFS) Glob(pattern string) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("glob %q: %w", pattern, err)
	}
	abs := f.abs(pattern)
	if _, ok := f.inside(abs); !ok {
		return nil, &PathEscapeError{Path: pattern}
	}
	matches := f.glob(abs)
	if !filesys.IsHiddenFilePath(pattern) {
		matches = filesys.RemoveHiddenFiles(matches)
	}
	sort.Strings(matches)
	return matches, nil
}

func (f *confinedFS) glob(pattern string) []string {
	if !hasMeta(pattern) {
		if f.Exists(pattern) {
			return []string{pattern}
		}
		return nil
	}
	dir, file := filepath.Split(pattern)
	dir = filepath.Clean(dir)
	dirs := []string{dir}
	if hasMeta(dir) {
		dirs = f.glob(dir)
	}
	var matches []string
	for _, d := range dirs {
		// Like filepath.Glob, a directory that cannot be read matches nothing.
		names, err := f.ReadDir(d)
		if err != nil {
			continue
		}
		for _, name := range names {
			if ok, _ := filepath.Match(file, name); ok {
				matches = append(matches, filepath.Join(d, name))
			}
		}
	}
	return matches
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// Walk walks the tree at p in lexical order with filepath.Walk's contract:
// symlinks are reported (with their lstat information), not descended into.
// A symlink that leads outside the root is reported with a *PathEscapeError
// as the walk function's error argument: return it to stop the walk, or nil
// to go on. Paths given to walkFn are absolute.
func (f *confinedFS) Walk(p string, walkFn filepath.WalkFunc) error {
	start := f.abs(p)
	real, info, err := f.stat(p)
	if err != nil {
		err = walkFn(start, nil, err)
	} else {
		err = f.walk(start, real, info, walkFn)
	}
	if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}

func (f *confinedFS) walk(shown, real string, info fs.FileInfo, walkFn filepath.WalkFunc) error {
	if info.Mode()&fs.ModeSymlink != 0 {
		var escape *PathEscapeError
		if _, err := f.resolve(real); errors.As(err, &escape) {
			escape.Path = f.display(shown)
			return walkFn(shown, info, escape)
		}
		return walkFn(shown, info, nil)
	}
	if !info.IsDir() {
		return walkFn(shown, info, nil)
	}
	entries, readErr := f.b.readDir(real)
	if err := walkFn(shown, info, readErr); err != nil || readErr != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == gitDir {
			continue
		}
		err := f.walk(filepath.Join(shown, e.Name()), filepath.Join(real, e.Name()), e, walkFn)
		if err != nil && (!e.IsDir() || !errors.Is(err, filepath.SkipDir)) {
			return err
		}
	}
	return nil
}

func (f *confinedFS) readOnly(op, p string) error {
	return &fs.PathError{Op: op, Path: f.display(p), Err: ErrReadOnly}
}

// Create refuses: a tree is read-only.
func (f *confinedFS) Create(p string) (filesys.File, error) { return nil, f.readOnly("create", p) }

// Mkdir refuses: a tree is read-only.
func (f *confinedFS) Mkdir(p string) error { return f.readOnly("mkdir", p) }

// MkdirAll refuses: a tree is read-only.
func (f *confinedFS) MkdirAll(p string) error { return f.readOnly("mkdir", p) }

// RemoveAll refuses: a tree is read-only.
func (f *confinedFS) RemoveAll(p string) error { return f.readOnly("remove", p) }

// WriteFile refuses: a tree is read-only.
func (f *confinedFS) WriteFile(p string, _ []byte) error { return f.readOnly("write", p) }

// roFile is an open file (or directory) of a confinedFS. Reading stops with a
// *FileTooLargeError past the size bound, should the file grow once open.
type roFile struct {
	info  fs.FileInfo
	name  string
	rc    io.ReadCloser // nil for a directory
	left  int64
	fsys  *confinedFS
	asked string
}

func (r *roFile) Read(p []byte) (int, error) {
	if r.rc == nil {
		return 0, &fs.PathError{Op: "read", Path: r.name, Err: syscall.EISDIR}
	}
	if r.left < 0 {
		return 0, r.fsys.grewTooLarge(r.asked)
	}
	if int64(len(p)) > r.left+1 {
		p = p[:r.left+1]
	}
	n, err := r.rc.Read(p)
	r.left -= int64(n)
	if r.left < 0 {
		return n, r.fsys.grewTooLarge(r.asked)
	}
	return n, err
}

func (r *roFile) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: r.name, Err: ErrReadOnly}
}

func (r *roFile) Close() error {
	if r.rc == nil {
		return nil
	}
	return r.rc.Close()
}

func (r *roFile) Stat() (os.FileInfo, error) { return r.info, nil }
