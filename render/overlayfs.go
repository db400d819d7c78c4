package render

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// overlayFS is the filesystem kustomize builds an app from: the repository, read-only,
// with some files replaced or added in memory (the app's kustomization with origin
// annotations turned on, generators left out; the kustomization Flux would generate for
// a folder without one). The user's files are never written. Nothing outside the
// repository root is visible, except, when remote bases are allowed, the temporary folders
// kustomize clones them into.
type overlayFS struct {
	base filesys.FileSystem
	root string
	// replaced holds the replacement files, by absolute path.
	replaced map[string][]byte
	// clones gives access to kustomize's clone folders on disk (nil when remote bases
	// are off).
	clones filesys.FileSystem
}

var _ filesys.FileSystem = (*overlayFS)(nil)

// kustomizeCloneDir is where kustomize clones remote bases (filesys.NewTmpConfirmedDir).
var kustomizeCloneDir = filepath.Join(os.TempDir(), "kustomize-")

func newOverlayFS(r *repo, overrides map[string][]byte, allowClones bool) *overlayFS {
	o := &overlayFS{base: r.fsys, root: r.root, replaced: make(map[string][]byte, len(overrides))}
	for rel, data := range overrides {
		o.replaced[r.abs(rel)] = data
	}
	if allowClones {
		o.clones = filesys.MakeFsOnDisk()
	}
	return o
}

// route picks the filesystem that serves p, or refuses p. Replaced files are served by
// ReadFile and Open before routing; for everything else about them (they exist, they
// are files) the repository answers.
func (o *overlayFS) route(p string) (filesys.FileSystem, error) {
	p = path.Clean(p)
	switch {
	case p == o.root || strings.HasPrefix(p, o.root+"/") || o.root == "/":
		return o.base, nil
	case o.clones != nil && strings.HasPrefix(p, kustomizeCloneDir):
		return o.clones, nil
	}
	return nil, fmt.Errorf("%s: %w", p, ErrOutsideRepository)
}

func (o *overlayFS) writable(p string) (filesys.FileSystem, error) {
	if o.clones != nil && strings.HasPrefix(path.Clean(p), kustomizeCloneDir) {
		return o.clones, nil
	}
	return nil, fmt.Errorf("%s: olmsync does not write to the repository", p)
}

func (o *overlayFS) Create(p string) (filesys.File, error) {
	fs, err := o.writable(p)
	if err != nil {
		return nil, err
	}
	return fs.Create(p)
}

func (o *overlayFS) Mkdir(p string) error {
	fs, err := o.writable(p)
	if err != nil {
		return err
	}
	return fs.Mkdir(p)
}

func (o *overlayFS) MkdirAll(p string) error {
	fs, err := o.writable(p)
	if err != nil {
		return err
	}
	return fs.MkdirAll(p)
}

func (o *overlayFS) RemoveAll(p string) error {
	fs, err := o.writable(p)
	if err != nil {
		return err
	}
	return fs.RemoveAll(p)
}

func (o *overlayFS) WriteFile(p string, data []byte) error {
	fs, err := o.writable(p)
	if err != nil {
		return err
	}
	return fs.WriteFile(p, data)
}

func (o *overlayFS) Open(p string) (filesys.File, error) {
	if data, ok := o.replaced[path.Clean(p)]; ok {
		return &memFile{Reader: bytes.NewReader(data), name: path.Base(p), size: int64(len(data))}, nil
	}
	fs, err := o.route(p)
	if err != nil {
		return nil, err
	}
	return fs.Open(p)
}

func (o *overlayFS) ReadFile(p string) ([]byte, error) {
	if data, ok := o.replaced[path.Clean(p)]; ok {
		return bytes.Clone(data), nil
	}
	fs, err := o.route(p)
	if err != nil {
		return nil, err
	}
	return fs.ReadFile(p)
}

func (o *overlayFS) IsDir(p string) bool {
	if _, ok := o.replaced[path.Clean(p)]; ok {
		return false
	}
	fs, err := o.route(p)
	return err == nil && fs.IsDir(p)
}

// Exists is true for a file the overlay adds (the kustomization generated for a Flux
// folder) as for the repository's own.
func (o *overlayFS) Exists(p string) bool {
	if _, ok := o.replaced[path.Clean(p)]; ok {
		return true
	}
	fs, err := o.route(p)
	return err == nil && fs.Exists(p)
}

func (o *overlayFS) ReadDir(p string) ([]string, error) {
	fs, err := o.route(p)
	if err != nil {
		return nil, err
	}
	return fs.ReadDir(p)
}

// CleanedAbs resolves p in the filesystem that holds it. A file the overlay adds is in
// its folder.
func (o *overlayFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	if _, ok := o.replaced[path.Clean(p)]; ok {
		d, _, err := o.CleanedAbs(path.Dir(path.Clean(p)))
		return d, path.Base(p), err
	}
	fs, err := o.route(p)
	if err != nil {
		return "", "", err
	}
	d, f, err := fs.CleanedAbs(p)
	if err != nil {
		return "", "", err
	}
	// A symlink may resolve out of the repository; kustomize must not follow it there.
	if _, err := o.route(d.Join(f)); err != nil {
		return "", "", err
	}
	return d, f, nil
}

func (o *overlayFS) Glob(pattern string) ([]string, error) {
	fs, err := o.route(path.Dir(pattern))
	if err != nil {
		return nil, err
	}
	return fs.Glob(pattern)
}

func (o *overlayFS) Walk(p string, fn filepath.WalkFunc) error {
	fs, err := o.route(p)
	if err != nil {
		return err
	}
	return fs.Walk(p, fn)
}

// memFile is a replaced file opened for reading.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Write([]byte) (int, error) { return 0, fmt.Errorf("%s: read-only", f.name) }
func (f *memFile) Close() error              { return nil }
func (f *memFile) Stat() (os.FileInfo, error) {
	return memFileInfo{name: f.name, size: f.size}, nil
}

type memFileInfo struct {
	name string
	size int64
}

func (i memFileInfo) Name() string       { return i.name }
func (i memFileInfo) Size() int64        { return i.size }
func (i memFileInfo) Mode() fs.FileMode  { return 0o444 }
func (i memFileInfo) ModTime() time.Time { return time.Time{} }
func (i memFileInfo) IsDir() bool        { return false }
func (i memFileInfo) Sys() any           { return nil }
