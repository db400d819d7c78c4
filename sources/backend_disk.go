package sources

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// diskBackend reads a working tree as it is on disk. A Tree is one look at the disk, as a
// commit is: what lstat said of a path is remembered for the tree's life, so resolving
// the thousands of paths a render asks for (every folder on the way to each file, each
// checked for symlinks) costs one system call per path, not one per component per ask.
// Directory listings fill the same memory. Safe for many goroutines.
type diskBackend struct {
	lstats sync.Map // absolute path → lstatResult
}

type lstatResult struct {
	info fs.FileInfo
	err  error
}

func (d *diskBackend) lstat(p string) (fs.FileInfo, error) {
	if r, ok := d.lstats.Load(p); ok {
		return r.(lstatResult).info, r.(lstatResult).err
	}
	info, err := os.Lstat(p)
	d.lstats.Store(p, lstatResult{info, err})
	return info, err
}

func (*diskBackend) readlink(p string) (string, error) { return os.Readlink(p) }

func (d *diskBackend) readDir(p string) ([]fs.FileInfo, error) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	infos := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			// Removed since the directory was read: it is simply not there.
			continue
		}
		d.lstats.LoadOrStore(filepath.Join(p, e.Name()), lstatResult{info: info})
		infos = append(infos, info)
	}
	return infos, nil
}

func (*diskBackend) open(p string) (io.ReadCloser, error) { return os.Open(p) }

// absoluteLinksEscape is false: on disk an absolute target may well point
// back into the working tree, and confinedFS checks where it lands.
func (*diskBackend) absoluteLinksEscape() bool { return false }
