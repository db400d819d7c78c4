package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// ErrLeaseLost is what Manager.Start returns when this replica lost its leader lease
// (another took it, or it could not renew it in time): not a failure of olmsync's, the
// process ends so that it starts again as a candidate, and `olmsync run` exits cleanly.
var ErrLeaseLost = errors.New("leader election lost: another replica leads now, or the lease could not be renewed in time")

// Timings of leader election: a candidate takes a lease not renewed for LeaseDuration;
// the leader gives up when it could not renew within RenewDeadline, trying every
// RetryPeriod. The zero value is DefaultTimings.
type Timings struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// DefaultTimings are controller-runtime's defaults, as Flux's controllers use them.
var DefaultTimings = Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}

func (t Timings) withDefaults() Timings {
	if t.LeaseDuration <= 0 || t.RenewDeadline <= 0 || t.RetryPeriod <= 0 {
		return DefaultTimings
	}
	return t
}

// lease is the leader-election lock with a fence: it records when this replica last wrote
// the lease as its holder, and Held says whether that is recent enough for it to act. A
// replica paused (a stopped process, a frozen VM) for longer than the lease is deposed
// while it cannot tell; when it runs again, its workers would write before its elector
// notices. The fence (fencedTransport) refuses every write of the manager while Held is
// false, so a deposed leader stops acting before it writes, not RenewDeadline later.
type lease struct {
	resourcelock.Interface
	// fresh is how long after a renewal this replica still acts: RenewDeadline, shorter
	// than the LeaseDuration after which another replica takes the lease.
	fresh time.Duration
	// path is the URL path of the lease object, whose own writes pass the fence.
	path string

	mu      sync.Mutex
	renewed time.Time // with the monotonic clock, which runs on while the process is stopped
	held    bool
}

// newLease builds the Lease lock controller-runtime would (namespace: the given one, else
// the one olmsync runs in; identity: host name and a UID), fenced.
func newLease(cfg *rest.Config, namespace, name string, t Timings) (*lease, error) {
	if namespace == "" {
		data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
		if err != nil {
			return nil, fmt.Errorf("leader election: no namespace for the lease outside a cluster (--leader-election-namespace): %w", err)
		}
		namespace = strings.TrimSpace(string(data))
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	lc := rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	// A hung request must not outlive the renew deadline (as controller-runtime sets it).
	lc.Timeout = max(t.RenewDeadline/2, time.Second)
	core, err := corev1client.NewForConfig(lc)
	if err != nil {
		return nil, err
	}
	coordination, err := coordinationv1client.NewForConfig(lc)
	if err != nil {
		return nil, err
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, name, core, coordination,
		resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())})
	if err != nil {
		return nil, err
	}
	return &lease{Interface: lock, fresh: t.RenewDeadline,
		path: fmt.Sprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases", namespace)}, nil
}

func (l *lease) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Create(ctx, rec)
	l.wrote(rec, err)
	return err
}

func (l *lease) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Update(ctx, rec)
	l.wrote(rec, err)
	return err
}

// wrote records a write of the lease: this replica holds it from now on when the record
// names it, and no longer when it released it.
func (l *lease) wrote(rec resourcelock.LeaderElectionRecord, err error) {
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = rec.HolderIdentity == l.Identity()
	l.renewed = time.Now()
}

// Held reports whether this replica holds the lease and renewed it within the fresh
// window, and if not, since when it last renewed.
func (l *lease) Held() (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	since := time.Since(l.renewed)
	return l.held && since < l.fresh, since
}

// everHeld reports whether this replica ever held the lease.
func (l *lease) everHeld() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.renewed.IsZero()
}

// ErrNotLeader is the error of a write the fence refused.
var ErrNotLeader = errors.New("not written: this replica does not hold a fresh leader lease")

// fence wraps cfg's transport so that every write (POST, PUT, PATCH, DELETE) but the
// lease's own is refused while the lease is not held. Reads pass: a deposed replica may
// look, never act.
func (l *lease) fence(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return fencedTransport{next: rt, lease: l}
	})
}

type fencedTransport struct {
	next  http.RoundTripper
	lease *lease
}

func (f fencedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return f.next.RoundTrip(r)
	}
	if strings.HasPrefix(r.URL.Path, f.lease.path) {
		return f.next.RoundTrip(r)
	}
	if held, since := f.lease.Held(); !held {
		return nil, fmt.Errorf("%s %s: %w (last renewed %s ago)", r.Method, r.URL.Path, ErrNotLeader, since.Round(time.Millisecond))
	}
	return f.next.RoundTrip(r)
}
