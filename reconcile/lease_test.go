package reconcile

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// identity is a resourcelock.Interface that only has an identity: what the fence reads.
type identity struct{ resourcelock.Interface }

func (identity) Identity() string { return "replica-a" }

// The fence lets every request through while this replica holds a lease it renewed within
// the fresh window, and reads and the lease's own requests always; any other write is
// refused without reaching the API server.
func TestFence(t *testing.T) {
	const leases = "/apis/coordination.k8s.io/v1/namespaces/olmsync-system/leases"
	requests := []struct {
		method, path string
		write        bool
	}{
		{http.MethodGet, "/apis/olmsync.dev/v1alpha1/namespaces/a/syncs/s", false},
		{http.MethodPatch, "/apis/olmsync.dev/v1alpha1/namespaces/a/syncs/s/status", true},
		{http.MethodPost, "/api/v1/namespaces/a/configmaps", true},
		{http.MethodDelete, "/api/v1/namespaces/a/configmaps/c", true},
		{http.MethodPut, leases + "/olm.olmsync.dev", false},
		{http.MethodPost, leases, false},
	}
	for _, tc := range []struct {
		name    string
		holder  string
		renewed time.Duration // ago; 0 never
		passes  bool
	}{
		{"never held", "", 0, false},
		{"held, renewed just now", "replica-a", time.Millisecond, true},
		{"held, not renewed within the window (paused, or the API server away)", "replica-a", 4 * time.Second, false},
		{"released, or taken by another", "replica-b", time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &lease{Interface: identity{}, fresh: 3 * time.Second, path: leases}
			if tc.renewed > 0 {
				l.wrote(resourcelock.LeaderElectionRecord{HolderIdentity: tc.holder}, nil)
				l.renewed = time.Now().Add(-tc.renewed)
			}
			reached := 0
			fenced := fencedTransport{lease: l, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
				reached++
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
			})}
			for _, r := range requests {
				reached = 0
				resp, err := fenced.RoundTrip(httptest.NewRequest(r.method, "https://api"+r.path, nil))
				if resp != nil {
					_ = resp.Body.Close()
				}
				refused := r.write && !tc.passes
				if refused != (err != nil) || refused != (reached == 0) {
					t.Errorf("%s %s: error %v, reached the server %d time(s); want refused=%t", r.method, r.path, err, reached, refused)
				}
				if err != nil && !errors.Is(err, ErrNotLeader) {
					t.Errorf("%s %s: error %v is not ErrNotLeader", r.method, r.path, err)
				}
			}
		})
	}
}

// A failed write of the lease changes nothing of what the fence knows.
func TestLeaseWroteIgnoresFailures(t *testing.T) {
	l := &lease{Interface: identity{}, fresh: time.Second}
	l.wrote(resourcelock.LeaderElectionRecord{HolderIdentity: "replica-a"}, errors.New("conflict"))
	if held, _ := l.Held(); held || l.everHeld() {
		t.Error("a failed write of the lease counts as holding it")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
