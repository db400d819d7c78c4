package sources

import (
	"io"
	"io/fs"
	"os"
)

// diskBackend reads a working tree as it is on disk.
type diskBackend struct{}

func (diskBackend) lstat(p string) (fs.FileInfo, error) { return os.Lstat(p) }

func (diskBackend) readlink(p string) (string, error) { return os.Readlink(p) }

func (diskBackend) readDir(p string) ([]fs.FileInfo, error) {
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
		infos = append(infos, info)
	}
	return infos, nil
}

func (diskBackend) open(p string) (io.ReadCloser, error) { return os.Open(p) }

// absoluteLinksEscape is false: on disk an absolute target may well point
// back into the working tree, and confinedFS checks where it lands.
func (diskBackend) absoluteLinksEscape() bool { return false }
