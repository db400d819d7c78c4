package sources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// cacheLocks holds one semaphore per cache repository directory, so that
// fetches of one URL in this process run one at a time.
var cacheLocks sync.Map // string → chan struct{}

// lockPoll is how often a fetch waiting for another process's lock looks
// again.
const lockPoll = 50 * time.Millisecond

// lockCache takes the cache repository at dir for this fetch, first in this
// process and then across processes (a lock file beside it), and gives up
// when ctx ends. The returned func releases both.
func lockCache(ctx context.Context, dir string) (func(), error) {
	v, _ := cacheLocks.LoadOrStore(dir, make(chan struct{}, 1))
	sem := v.(chan struct{})
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the cache lock of %s: %w", filepath.Base(dir), ctx.Err())
	}
	release := func() { <-sem }

	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		release()
		return nil, err
	}
	unlockFile, err := lockFile(ctx, dir+".lock")
	if err != nil {
		release()
		return nil, err
	}
	return func() {
		unlockFile()
		release()
	}, nil
}
