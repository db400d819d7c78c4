package sources

import (
	"bytes"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// memBackend is an immutable in-memory snapshot of a directory tree, built
// once (from a commit's objects) and then only read, so it needs no locks.
type memBackend struct {
	nodes   map[string]*memNode // by absolute clean path
	modTime time.Time           // the commit's time, for every entry
}

// memNode is a file, a directory or a symlink.
type memNode struct {
	name     string
	mode     fs.FileMode // fs.ModeDir, fs.ModeSymlink, or permission bits of a file
	size     int64
	data     []byte     // a file's content (nil when over the size bound) or a link's target
	children []*memNode // a directory's entries, sorted by name once built
	backend  *memBackend
}

// newMemBackend makes an empty snapshot whose top directory is root.
func newMemBackend(root string, modTime time.Time) *memBackend {
	b := &memBackend{nodes: map[string]*memNode{}, modTime: modTime}
	b.nodes[root] = &memNode{name: filepath.Base(root), mode: fs.ModeDir | 0o755, backend: b}
	return b
}

// add puts a node under its parent directory, which must already exist.
func (b *memBackend) add(p string, n *memNode) {
	n.name = filepath.Base(p)
	n.backend = b
	parent := b.nodes[filepath.Dir(p)]
	parent.children = append(parent.children, n)
	b.nodes[p] = n
}

// seal sorts every directory's entries; git orders a tree's entries by name
// with a "/" after directory names, which is not the order Walk promises.
func (b *memBackend) seal() {
	for _, n := range b.nodes {
		if n.mode.IsDir() {
			sort.Slice(n.children, func(i, j int) bool { return n.children[i].name < n.children[j].name })
		}
	}
}

func (b *memBackend) node(p string) (*memNode, error) {
	n, ok := b.nodes[p]
	if !ok {
		return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
	}
	return n, nil
}

func (b *memBackend) lstat(p string) (fs.FileInfo, error) {
	n, err := b.node(p)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (b *memBackend) readlink(p string) (string, error) {
	n, err := b.node(p)
	if err != nil {
		return "", err
	}
	if n.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: p, Err: syscall.EINVAL}
	}
	return string(n.data), nil
}

func (b *memBackend) readDir(p string) ([]fs.FileInfo, error) {
	n, err := b.node(p)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: syscall.ENOTDIR}
	}
	infos := make([]fs.FileInfo, len(n.children))
	for i, c := range n.children {
		infos[i] = c
	}
	return infos, nil
}

func (b *memBackend) open(p string) (io.ReadCloser, error) {
	n, err := b.node(p)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(n.data)), nil
}

func (b *memBackend) absoluteLinksEscape() bool { return true }

// memNode is its own fs.FileInfo.
func (n *memNode) Name() string       { return n.name }
func (n *memNode) Size() int64        { return n.size }
func (n *memNode) Mode() fs.FileMode  { return n.mode }
func (n *memNode) ModTime() time.Time { return n.backend.modTime }
func (n *memNode) IsDir() bool        { return n.mode.IsDir() }
func (n *memNode) Sys() any           { return nil }
