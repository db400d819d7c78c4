package installplan

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/olm/pullsecret"
)

// DefaultPullTimeout bounds one pull of a bundle image.
const DefaultPullTimeout = 5 * time.Minute

// unpackedResults is how many unpacked bundles the Unpacker keeps in memory.
const unpackedResults = 64

// Unpacker unpacks bundle images in the background, so that a reconcile never waits on a
// registry: Get starts a pull and returns at once; when the pull ends, every plan that
// asked is woken. What it unpacked stays in memory (the last few) and on disk (the image
// cache, by digest); a failed pull is tried again no sooner than RetryInterval after it
// ended. The image cache bounds how many pulls run at once. Safe for concurrent use.
type Unpacker struct {
	// Images says how images are pulled and where they are cached.
	Images catalog.ImageOptions
	// RetryInterval is how long a failed pull is answered with its error before it is
	// tried again.
	RetryInterval time.Duration
	// PullTimeout bounds one pull (DefaultPullTimeout when zero).
	PullTimeout time.Duration
	// Wake is called with every plan that waits for a pull when it ends.
	Wake func(plan types.NamespacedName)

	mu    sync.Mutex
	pulls map[unpackKey]*pull
	// done orders the finished successful pulls, oldest first, to forget the oldest.
	done *list.List
}

// unpackKey names one pull: an image, for one catalog. The catalog is part of the key
// because its credentials are: a bundle another catalog could pull is not handed to one
// whose credentials would not have pulled it.
type unpackKey struct {
	image   string
	catalog types.NamespacedName
}

type pull struct {
	running  bool
	result   *catalog.UnpackedBundle
	err      error
	ended    time.Time
	waiters  map[types.NamespacedName]bool
	doneElem *list.Element
}

// Result is where one bundle image's unpacking stands.
type Result struct {
	// Done is false while a pull runs.
	Done bool
	// Bundle is the unpacked bundle when Done and Err is nil.
	Bundle *catalog.UnpackedBundle
	// Err is why the last pull failed, credentials redacted; while a pull runs, why the
	// one before it failed, if it did.
	Err error
}

// Get returns where the unpacking of image for the catalog stands, starting a pull with
// creds when none ran yet, or the last one failed more than RetryInterval ago. plan is
// woken when a pull it waits for ends.
func (u *Unpacker) Get(image string, catalogSource types.NamespacedName, creds *pullsecret.Credentials, plan types.NamespacedName) Result {
	key := unpackKey{image: image, catalog: catalogSource}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pulls == nil {
		u.pulls, u.done = map[unpackKey]*pull{}, list.New()
	}
	p := u.pulls[key]
	switch {
	case p != nil && p.running:
		p.waiters[plan] = true
		// A pull tried again: the last one's error stays what the plan shows meanwhile.
		return Result{Err: p.err}
	case p != nil && p.err == nil:
		u.done.MoveToBack(p.doneElem)
		return Result{Done: true, Bundle: p.result}
	case p != nil && time.Since(p.ended) < u.RetryInterval:
		return Result{Done: true, Err: p.err}
	}
	if p == nil {
		p = &pull{}
		u.pulls[key] = p
	}
	p.running, p.waiters = true, map[types.NamespacedName]bool{plan: true}
	go u.run(key, p, creds)
	return Result{Err: p.err}
}

func (u *Unpacker) run(key unpackKey, p *pull, creds *pullsecret.Credentials) {
	timeout := u.PullTimeout
	if timeout <= 0 {
		timeout = DefaultPullTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	opts := u.Images
	if creds != nil {
		opts.Keychain = creds
	}
	res, err := catalog.LoadBundleImage(ctx, key.image, opts)
	if err != nil {
		err = &unpackError{msg: creds.Explain(err), permanent: catalog.IsPermanent(err), bundle: res}
	}
	u.mu.Lock()
	p.running, p.ended = false, time.Now()
	p.result, p.err = res, err
	waiters := p.waiters
	p.waiters = nil
	if err == nil {
		p.doneElem = u.done.PushBack(key)
		for u.done.Len() > unpackedResults {
			oldest := u.done.Remove(u.done.Front()).(unpackKey)
			delete(u.pulls, oldest)
		}
	}
	u.mu.Unlock()
	if u.Wake != nil {
		for plan := range waiters {
			u.Wake(plan)
		}
	}
}

// unpackError is a failed pull, as it may be shown.
type unpackError struct {
	msg       string
	permanent bool
	// bundle is what could be read of a bundle that is not one OLM installs.
	bundle *catalog.UnpackedBundle
}

func (e *unpackError) Error() string { return e.msg }

// IsPermanentUnpackError reports whether a pull failed for good.
func IsPermanentUnpackError(err error) bool {
	var ue *unpackError
	return errors.As(err, &ue) && ue.permanent
}
