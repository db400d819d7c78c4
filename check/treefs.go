package check

import (
	"bytes"
	"io"
	"io/fs"
	"path"
	"slices"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/olmsync/olmsync/sources"
)

// TreeFS shows the folder dir (an absolute path of the tree, Tree.Abs) of a revision as
// an io/fs.FS, confined to the repository and bound in size like the tree itself.
func TreeFS(tree *sources.Tree, dir string) fs.FS { return treeFS(tree.FS, dir) }

// treeFS shows the folder dir of a kustomize filesystem (a sources.Tree's, confined to
// the repository) as an io/fs.FS, which is what the policy package reads rules from.
// Reads go through the tree, so its confinement and size bound hold for rules too.
func treeFS(fsys filesys.FileSystem, dir string) fs.FS {
	return &dirFS{fsys: fsys, dir: dir}
}

type dirFS struct {
	fsys filesys.FileSystem
	dir  string
}

var (
	_ fs.ReadDirFS  = (*dirFS)(nil)
	_ fs.ReadFileFS = (*dirFS)(nil)
	_ fs.StatFS     = (*dirFS)(nil)
)

func (d *dirFS) abs(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return path.Join(d.dir, name), nil
}

func (d *dirFS) Stat(name string) (fs.FileInfo, error) {
	p, err := d.abs("stat", name)
	if err != nil {
		return nil, err
	}
	if !d.fsys.Exists(p) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	e, err := d.entry(p)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return e, nil
}

// entry describes the file or folder at p (an absolute path of the tree).
func (d *dirFS) entry(p string) (entry, error) {
	e := entry{name: path.Base(p), dir: d.fsys.IsDir(p)}
	if e.dir {
		return e, nil
	}
	f, err := d.fsys.Open(p)
	if err != nil {
		return e, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return e, err
	}
	e.size = info.Size()
	return e, nil
}

func (d *dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := d.abs("readdir", name)
	if err != nil {
		return nil, err
	}
	names, err := d.fsys.ReadDir(p)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	slices.Sort(names)
	out := make([]fs.DirEntry, 0, len(names))
	for _, n := range names {
		e, err := d.entry(path.Join(p, n))
		if err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
		}
		out = append(out, e)
	}
	return out, nil
}

func (d *dirFS) ReadFile(name string) ([]byte, error) {
	p, err := d.abs("read", name)
	if err != nil {
		return nil, err
	}
	data, err := d.fsys.ReadFile(p)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

func (d *dirFS) Open(name string) (fs.File, error) {
	info, err := d.Stat(name)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		entries, err := d.ReadDir(name)
		if err != nil {
			return nil, err
		}
		return &dirFile{file: file{info: info}, entries: entries}, nil
	}
	data, err := d.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &file{Reader: bytes.NewReader(data), info: info}, nil
}

// entry is both the fs.DirEntry and the fs.FileInfo of a file or folder.
type entry struct {
	name string
	dir  bool
	size int64
}

func (e entry) Name() string               { return e.name }
func (e entry) IsDir() bool                { return e.dir }
func (e entry) Size() int64                { return e.size }
func (e entry) ModTime() time.Time         { return time.Time{} }
func (e entry) Sys() any                   { return nil }
func (e entry) Info() (fs.FileInfo, error) { return e, nil }
func (e entry) Type() fs.FileMode          { return e.Mode().Type() }
func (e entry) Mode() fs.FileMode {
	if e.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// file is an open file, or the part of an open folder that is not its entries.
type file struct {
	*bytes.Reader
	info fs.FileInfo
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

func (f *file) Read(p []byte) (int, error) {
	if f.Reader == nil {
		return 0, &fs.PathError{Op: "read", Path: f.info.Name(), Err: fs.ErrInvalid}
	}
	return f.Reader.Read(p)
}

// dirFile is an open folder.
type dirFile struct {
	file
	entries []fs.DirEntry
}

// ReadDir returns the next n entries (all that are left when n <= 0), as fs.ReadDirFile
// says.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n]
	d.entries = d.entries[n:]
	return out, nil
}
