package sources

import (
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// Blobs keeps the files that the committed trees of one repository read, by blob hash,
// so that revisions opened together — a pull request's base and head, read at once by
// `olmsync check --base` — inflate and hold once each file they have in common, which
// is most of them. The trees then share those bytes, as they share nothing else: a
// tree's files are read-only. Safe for concurrent use; a nil *Blobs keeps nothing.
type Blobs struct {
	mu sync.Mutex
	m  map[blobKey]*blobEntry
}

// blobKey is a blob read under a size bound: over it, a tree keeps its size alone.
type blobKey struct {
	hash  plumbing.Hash
	bound int64
}

// blobEntry is one blob: done is closed once size, data and err are set.
type blobEntry struct {
	done chan struct{}
	size int64
	data []byte
	err  error
}

// NewBlobs returns an empty cache.
func NewBlobs() *Blobs {
	return &Blobs{m: map[blobKey]*blobEntry{}}
}

// read returns blob hash's size and content (nil over bound) through load, called once
// per blob and bound however many trees read it: the others wait for it.
func (c *Blobs) read(hash plumbing.Hash, bound int64, load func() (int64, []byte, error)) (int64, []byte, error) {
	if c == nil {
		return load()
	}
	key := blobKey{hash, bound}
	c.mu.Lock()
	e, ok := c.m[key]
	if !ok {
		e = &blobEntry{done: make(chan struct{})}
		c.m[key] = e
	}
	c.mu.Unlock()
	if !ok {
		e.size, e.data, e.err = load()
		close(e.done)
	}
	<-e.done
	return e.size, e.data, e.err
}
