package gitsync_test

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// stalledServer is a TCP listener on loopback that accepts every connection and never
// answers: a git server that hangs. It counts the connections it holds.
type stalledServer struct {
	addr  string
	mu    sync.Mutex
	conns []net.Conn
}

func newStalledServer(t *testing.T) *stalledServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stalledServer{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			_ = c.Close()
		}
	})
	return s
}

func (s *stalledServer) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// healthyWait bounds the time a healthy Sync's commit may take to be applied while other
// Syncs' servers hang: far more than it takes (about a second), far less than the stalled
// fetches' timeout, which is what a reconcile worker held by one of them would add.
const healthyWait = 60 * time.Second

// appliedWithin waits up to healthyWait for the Sync to be Ready at the commit, and says
// how long it took from since.
func appliedWithin(t *testing.T, env *testenv.Env, s *olmsyncv1alpha1.Sync, commit string, since time.Time) time.Duration {
	t.Helper()
	for deadline := time.Now().Add(healthyWait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got, err := getSync(env, s)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(got.Status.LastAppliedRevision, commit) && conditions.IsReady(got) {
			return time.Since(since)
		}
	}
	t.Fatalf("Sync %s did not apply %s within %s of its push", s.Name, commit, healthyWait)
	return 0
}

// TestStalledServersDoNotHoldBackOthers (issue 30): git servers that accept connections
// and never answer held a reconcile worker each for the whole fetch timeout, so that with
// six of them another Sync's commit waited about 60 s. Fetches now run off the workers, a
// quarter of the fetch slots at most per server, each slot given up after 10 s.
//
// Eight Syncs of one hanging server, with a fetch timeout of 10 minutes, are fetching (the
// server holds their connections); a healthy Sync of another server applies a new commit
// within a minute. Then twenty new Syncs of five more hanging servers, also with 10-minute
// timeouts, take all 16 fetch slots at once: the healthy Sync's next commit is applied
// within a minute (once they gave their slots up), and the one after too.
func TestStalledServersDoNotHoldBackOthers(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	const syncNS = "olmsync-stalled"
	createNamespace(t, env, syncNS)
	ns := uniqueNS("stalled")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	healthy := newSync(t, env, syncNS, "healthy", srv.RepoURL(), nil)
	appliedAt(t, env, healthy, up.Head(t))

	hung := newStalledServer(t)
	for i := range 8 {
		newSync(t, env, syncNS, fmt.Sprintf("hung-%d", i), fmt.Sprintf("http://%s/r%d.git", hung.addr, i), func(spec *olmsyncv1alpha1.SyncSpec) {
			spec.Source.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
		})
	}
	olmtest.Eventually(t, "the hanging server holding the fetches", func() error {
		if n := hung.accepted(); n < 4 {
			return fmt.Errorf("%d connections", n)
		}
		return nil
	})
	pushed := time.Now()
	next := up.Push(t, map[string]string{"team/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: debug\n"}, "debug")
	took := appliedWithin(t, env, healthy, next, pushed)
	t.Logf("beside 8 Syncs of a hanging server (%d connections held): the healthy Sync applied its commit %s after the push", hung.accepted(), took.Round(time.Millisecond))

	var more []*stalledServer
	for h := range 5 {
		more = append(more, newStalledServer(t))
		for i := range 4 {
			newSync(t, env, syncNS, fmt.Sprintf("slow-%d-%d", h, i), fmt.Sprintf("http://%s/r%d.git", more[h].addr, i), func(spec *olmsyncv1alpha1.SyncSpec) {
				spec.Source.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
			})
		}
	}
	held := func() int {
		n := 0
		for _, s := range more {
			n += s.accepted()
		}
		return n
	}
	olmtest.Eventually(t, "the new hanging Syncs holding every fetch slot", func() error {
		if n := held(); n < 16 {
			return fmt.Errorf("%d connections", n)
		}
		return nil
	})
	pushed = time.Now()
	next = up.Push(t, map[string]string{"team/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: warn\n"}, "warn")
	took = appliedWithin(t, env, healthy, next, pushed)
	t.Logf("pushed when 20 new Syncs of 5 more hanging servers had taken every fetch slot (%d connections): applied %s after the push", held(), took.Round(time.Millisecond))
	olmtest.Eventually(t, "every new hanging Sync fetching", func() error {
		if n := held(); n < 20 {
			return fmt.Errorf("%d connections", n)
		}
		return nil
	})
	time.Sleep(10 * time.Second) // past the slot of the last of them
	pushed = time.Now()
	next = up.Push(t, map[string]string{"team/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: error\n"}, "error")
	took = appliedWithin(t, env, healthy, next, pushed)
	t.Logf("and once all 28 hanging fetches had given their slots up (%d connections held): applied %s after the push", hung.accepted()+held(), took.Round(time.Millisecond))
	if cm := object(t, env, configMapGVK, ns, "settings"); cm == nil || cm.Object["data"].(map[string]any)["level"] != "error" {
		t.Errorf("ConfigMap settings = %v, want level error", cm)
	}
}
