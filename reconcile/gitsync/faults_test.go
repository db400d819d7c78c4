package gitsync_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/gitsync"
	"github.com/olmsync/olmsync/reconcile/inventory"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// The environment of the subprocess a fault test runs the manager in.
const (
	childKubeconfigEnv = "OLMSYNC_TEST_CHILD_KUBECONFIG"
	childCacheEnv      = "OLMSYNC_TEST_CHILD_CACHE"
	childCrashAtEnv    = "OLMSYNC_TEST_CHILD_CRASH_AT"
	childMarkerEnv     = "OLMSYNC_TEST_CHILD_MARKER"
	// childPauseAtEnv: instead of waiting to be killed at its crash point, the child
	// sleeps there a moment (the test stops it meanwhile) and goes on.
	childPauseAtEnv = "OLMSYNC_TEST_CHILD_PAUSE_AT"
	// childLeaseEnv turns leader election on with a Lease in that namespace.
	childLeaseEnv = "OLMSYNC_TEST_CHILD_LEASE_NAMESPACE"
	// childWritesEnv names the file where the child lists the writes that reached the API
	// server after it was stopped and continued.
	childWritesEnv = "OLMSYNC_TEST_CHILD_WRITES"
)

// TestManagerChild is not a test of its own: it is the manager a fault test runs as a
// subprocess of the test binary, so that the test can kill it with SIGKILL. When the
// revision it applies ends with $OLMSYNC_TEST_CHILD_CRASH_AT, it writes the marker file
// right after the apply, before anything of it reaches the Sync's status, and waits to
// be killed there.
func TestManagerChild(t *testing.T) {
	kubeconfig := os.Getenv(childKubeconfigEnv)
	if kubeconfig == "" {
		t.Skip("the subprocess of a fault test")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv(childWritesEnv); path != "" {
		recordWritesAfterPause(cfg, path)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := newManager(t, ctx, cfg, managerOptions{cacheDir: os.Getenv(childCacheEnv), leaseNamespace: os.Getenv(childLeaseEnv),
		logger: funcr.New(func(prefix, args string) { fmt.Println(prefix, args) }, funcr.Options{})})
	crashAt, pauseAt, marker := os.Getenv(childCrashAtEnv), os.Getenv(childPauseAtEnv), os.Getenv(childMarkerEnv)
	gitsync.SetAfterApply(m.Syncs, func(obj *olmsyncv1alpha1.Sync, revision string) {
		switch {
		case crashAt != "" && strings.HasSuffix(revision, crashAt):
			if err := os.WriteFile(marker, []byte(revision), 0o600); err != nil {
				panic(err)
			}
			select {} // applied, status not written: SIGKILL comes here
		case pauseAt != "" && strings.HasSuffix(revision, pauseAt):
			if err := os.WriteFile(marker, []byte(revision), 0o600); err != nil {
				panic(err)
			}
			time.Sleep(3 * time.Second) // applied, status not written: SIGSTOP comes here
		}
	})
	err = m.Start(ctx)
	if errors.Is(err, reconcile.ErrLeaseLost) {
		fmt.Println("manager ended: lease lost")
		return
	}
	if err != nil {
		t.Fatal(err)
	}
}

// recordWritesAfterPause makes cfg list, in the file at path, every write (but the lease's)
// that reaches the API server once the process has been stopped and continued. It wraps
// the transport before the manager's fence does, so it sees only what passed the fence.
// A heartbeat tells a pause: a write that finds it more than a second old, or comes after
// one that did, is after the pause.
func recordWritesAfterPause(cfg *rest.Config, path string) {
	var beat atomic.Int64
	var paused atomic.Bool
	go func() {
		for {
			now := time.Now().UnixNano()
			if last := beat.Swap(now); last != 0 && time.Duration(now-last) > time.Second {
				paused.Store(true) // this loop was stopped too: whoever runs first after a pause says so
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	var mu sync.Mutex
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			write := r.Method != http.MethodGet && r.Method != http.MethodHead && !strings.Contains(r.URL.Path, "/leases")
			if write && (paused.Load() || time.Since(time.Unix(0, beat.Load())) > time.Second) {
				paused.Store(true)
				mu.Lock()
				f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
				if err == nil {
					fmt.Fprintf(f, "%s %s\n", r.Method, r.URL.Path)
					_ = f.Close()
				}
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// child is a manager running in a subprocess.
type child struct {
	cmd    *exec.Cmd
	out    *bytes.Buffer
	marker string
}

// startChild runs the manager in a subprocess against env, with the git cache given, that
// stops right after applying the revision crashAt ("" never).
func startChild(t *testing.T, env *testenv.Env, cache, crashAt string, more ...string) *child {
	t.Helper()
	kubeconfig := env.UserKubeconfig(t, envtest.User{Name: "fault-test", Groups: []string{"system:masters"}})
	c := &child{out: &bytes.Buffer{}, marker: filepath.Join(t.TempDir(), "applied")}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestManagerChild$", "-test.count=1", "-test.v")
	c.cmd.Env = append(os.Environ(), childKubeconfigEnv+"="+kubeconfig, childCacheEnv+"="+cache,
		childCrashAtEnv+"="+crashAt, childMarkerEnv+"="+c.marker)
	c.cmd.Env = append(c.cmd.Env, more...)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("the subprocess manager's output:\n%s", c.out)
		}
	})
	return c
}

// atMarker waits until the subprocess reached its crash (or pause) point.
func (c *child) atMarker(t *testing.T) {
	t.Helper()
	olmtest.Eventually(t, "the subprocess manager at its crash point", func() error {
		if _, err := os.Stat(c.marker); err != nil {
			return fmt.Errorf("not yet: %w", err)
		}
		return nil
	})
}

// killAtCrashPoint kills the subprocess with SIGKILL once it has reached its crash point.
func (c *child) killAtCrashPoint(t *testing.T) {
	t.Helper()
	c.atMarker(t)
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

// TestKilledBetweenApplyAndInventory: the manager is killed (SIGKILL, in a subprocess)
// right after it applied a revision that adds objects, before the Sync's status records
// the apply; the revision is then reverted in Git, and a new manager started. The objects
// of the reverted revision must not be orphans (labelled as the Sync's, in neither Git nor
// the inventory): the inventory recorded them before the apply, so the new manager prunes
// them. Nothing else is lost, and the reverted revision is the applied one.
func TestKilledBetweenApplyAndInventory(t *testing.T) {
	env := testenv.Get(t)
	ns := uniqueNS("crash")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	cache := t.TempDir()
	createNamespace(t, env, "olmsync-crash")
	s := newSync(t, env, "olmsync-crash", ns, srv.RepoURL(), nil)

	// The revision the manager will die applying: two more ConfigMaps.
	gittest.Commit(t, up.Work, map[string]string{
		"team/one.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n",
		"team/two.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n",
	}, "two more")
	adding := up.Head(t)
	gittest.Git(t, up.Work, "reset", "-q", "--hard", "HEAD~1")
	c := startChild(t, env, cache, adding)
	first := appliedAt(t, env, s, up.Head(t))

	gittest.Git(t, up.Work, "reset", "-q", "--hard", adding)
	up.PushRefs(t)
	c.killAtCrashPoint(t)
	if object(t, env, configMapGVK, ns, "one") == nil || object(t, env, configMapGVK, ns, "two") == nil {
		t.Fatal("the killed manager had not applied the revision")
	}

	gittest.Git(t, up.Work, "revert", "--no-edit", adding)
	up.PushRefs(t)
	reverted := up.Head(t)

	startManager(t, env, managerOptions{cacheDir: cache})
	got := appliedAt(t, env, s, reverted)
	for _, name := range []string{"one", "two"} {
		if object(t, env, configMapGVK, ns, name) != nil {
			t.Errorf("ConfigMap %s/%s is an orphan: applied by the killed manager, reverted in Git, not pruned", ns, name)
		}
	}
	if object(t, env, configMapGVK, ns, "settings") == nil || object(t, env, operatorGroupGVK, ns, "og") == nil {
		t.Error("an object of the reverted-to revision was lost")
	}
	if len(got.Status.Inventory.Entries) != len(first.Status.Inventory.Entries) {
		t.Errorf("inventory %+v, want the %d objects of the first revision", got.Status.Inventory.Entries, len(first.Status.Inventory.Entries))
	}
	if lp := got.Status.LastPrune; lp == nil || lp.Deleted != 2 || !strings.HasSuffix(lp.Revision, reverted) {
		t.Errorf("status.lastPrune = %+v, want the two ConfigMaps deleted at %s", lp, reverted)
	}
	waitEvent(t, env, s, "Normal Pruned: ", "2 deleted", `ConfigMap "`+ns+`/one"`)
}

// TestPausedLeaderStopsBeforeItWrites: two replicas take turns through a Lease. The
// leader (a subprocess) is stopped (SIGSTOP) right after applying a revision, before it
// wrote the Sync's status; the other replica takes the lease and applies the revision.
// When the old leader continues (SIGCONT), it is deposed: not one write of it reaches the
// API server after the pause (its fence refuses them), it says so at info and ends
// cleanly; the revision stays applied, nothing is pruned, and the status is the new
// leader's.
func TestPausedLeaderStopsBeforeItWrites(t *testing.T) {
	env := testenv.Get(t)
	leaseNS := olmtest.NewNamespace(t, env, "lease")
	ns := uniqueNS("paused")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-paused")
	s := newSync(t, env, "olmsync-paused", ns, srv.RepoURL(), nil)

	gittest.Commit(t, up.Work, map[string]string{"team/x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"}, "x")
	x := up.Head(t)
	gittest.Git(t, up.Work, "reset", "-q", "--hard", "HEAD~1")
	writes := filepath.Join(t.TempDir(), "writes")
	a := startChild(t, env, t.TempDir(), "", childPauseAtEnv+"="+x, childLeaseEnv+"="+leaseNS, childWritesEnv+"="+writes)
	holder := func() string {
		l := &coordinationv1.Lease{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: leaseNS, Name: olm.LeaderElectionID}, l); err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	appliedAt(t, env, s, up.Head(t))
	leaderA := holder()
	if leaderA == "" {
		t.Fatal("the subprocess applied without holding the lease")
	}
	startManager(t, env, managerOptions{leaseNamespace: leaseNS}) // the other replica, waiting

	gittest.Git(t, up.Work, "reset", "-q", "--hard", x)
	up.PushRefs(t)
	a.atMarker(t)
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "the other replica leads", func() error {
		if h := holder(); h == "" || h == leaderA {
			return fmt.Errorf("holder %q", h)
		}
		return nil
	})
	got := appliedAt(t, env, s, x)
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- a.cmd.Wait() }()
	olmtest.Eventually(t, "the deposed replica ends", func() error {
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the deposed replica ended with %v, want a clean exit", err)
			}
			return nil
		default:
			return fmt.Errorf("still running")
		}
	})
	if data, err := os.ReadFile(writes); err == nil && len(data) > 0 {
		t.Errorf("the deposed replica wrote after it was paused:\n%s", data)
	}
	out := a.out.String()
	if !strings.Contains(out, `"msg"="leader lease lost: stopping, writing nothing more`) || !strings.Contains(out, "manager ended: lease lost") {
		t.Errorf("the deposed replica did not say, at info, that it lost the lease:\n%s", out)
	}
	if object(t, env, configMapGVK, ns, "x") == nil || object(t, env, configMapGVK, ns, "settings") == nil {
		t.Error("an object of the applied revision is missing")
	}
	after := appliedAt(t, env, s, x)
	if diff := cmp.Diff(got.Status.Inventory, after.Status.Inventory); diff != "" {
		t.Errorf("the inventory changed after the deposed replica continued (-before +after):\n%s", diff)
	}
}

// TestAPIServerRestartMidInstall: the API server is stopped in the middle of an operator's
// install — the InstallPlan done, the CSV Installing, waiting for its Deployment — and
// started again on the same etcd a while later. The manager rides it out (it does not
// stop), the install completes once the Deployment is available, with one InstallPlan, and
// the Sync is Ready at the revision with nothing lost and nothing pruned.
func TestAPIServerRestartMidInstall(t *testing.T) {
	env := testenv.Own(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("restart")
	api := olmtest.API{Group: ns + ".test.olmsync.dev", Version: "v1", Kind: "Widget"}
	v100 := olmtest.Bundle{Package: "widget", Version: "1.0.0", Owns: []olmtest.API{api}}
	up := gittest.NewUpstream(t, with(operatorRepository(t, ns, api, v100), map[string]string{"team/widget.yaml": ""}))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	createNamespace(t, env, "olmsync-restart")
	s := newSync(t, env, "olmsync-restart", ns, srv.RepoURL(), nil)

	olmtest.Eventually(t, "the CSV Installing, waiting for its Deployment", func() error {
		c := &v1alpha1.ClusterServiceVersion{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: v100.Name()}, c); err != nil {
			return err
		}
		if c.Status.Phase != v1alpha1.CSVPhaseInstalling {
			return fmt.Errorf("phase %q", c.Status.Phase)
		}
		return nil
	})
	before, err := getSync(env, s)
	if err != nil {
		t.Fatal(err)
	}
	env.StopAPIServer(t)
	time.Sleep(5 * time.Second) // several of the Sync's and OLM's retry intervals (1 s) without an API server
	env.StartAPIServer(t)

	ctx, cancel := context.WithCancel(context.Background())
	kubelet := make(chan struct{})
	go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns); close(kubelet) }()
	t.Cleanup(func() { cancel(); <-kubelet })
	got := operatorHealthy(t, env, s, ns, up.Head(t), v100.Name())
	plansSettle(t, env, ns, "[widget.v1.0.0] Complete")
	if diff := cmp.Diff(before.Status.Inventory, got.Status.Inventory); diff != "" {
		t.Errorf("the inventory changed across the restart (-before +after):\n%s", diff)
	}
	for _, e := range got.Status.Inventory.Entries {
		ref, err := inventory.ParseID(e.ID, e.Version)
		if err != nil {
			t.Fatal(err)
		}
		if object(t, env, ref.GroupVersionKind(), ref.Namespace, ref.Name) == nil {
			t.Errorf("%s was lost", ref)
		}
	}
}

// switchable is a TCP front of a server that can be taken down (nothing listens on its
// address: connections are refused, as of a git server that is down) and brought back on
// the same address.
type switchable struct {
	addr, target string
	mu           sync.Mutex
	l            net.Listener
	conns        []net.Conn
}

func newSwitchable(t *testing.T, target string) *switchable {
	t.Helper()
	s := &switchable{target: target}
	s.up(t)
	s.addr = s.l.Addr().String()
	t.Cleanup(s.down)
	return s
}

func (s *switchable) up(t *testing.T) {
	t.Helper()
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.l = l
	s.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			go func() {
				defer c.Close()
				b, err := net.Dial("tcp", s.target)
				if err != nil {
					return
				}
				defer b.Close()
				go func() { _, _ = io.Copy(b, c) }()
				_, _ = io.Copy(c, b)
			}()
		}
	}()
}

func (s *switchable) down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.l != nil {
		_ = s.l.Close()
		s.l = nil
	}
	// And the connections kept alive from before: a server that is down answers nothing.
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

// TestGitServerDownForSeveralIntervals: the git server is down for several fetch
// intervals while commits are pushed. The Sync says GitUnreachable, keeps the last good
// revision applied (an object deleted by hand comes back from the cache) and prunes
// nothing; when the server is back, the newest revision is applied and what it removed is
// pruned, and FetchFailed is gone.
func TestGitServerDownForSeveralIntervals(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("gitdown")
	up := gittest.NewUpstream(t, with(repository(ns), map[string]string{
		"team/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
	}))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	front := newSwitchable(t, strings.TrimPrefix(srv.URL, "http://"))
	createNamespace(t, env, "olmsync-gitdown")
	s := newSync(t, env, "olmsync-gitdown", ns, "http://"+front.addr+"/project.git", func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.Interval = metav1.Duration{Duration: 2 * time.Second}
	})
	good := appliedAt(t, env, s, up.Head(t))

	front.down()
	newer := up.Push(t, map[string]string{"team/extra.yaml": ""}, "drop extra")
	waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.GitUnreachableReason)
	time.Sleep(5 * time.Second) // five fetch intervals (1 s) and two drift intervals (2 s) more, down
	if err := env.Client.Delete(context.Background(), object(t, env, configMapGVK, ns, "settings")); err != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "the ConfigMap deleted by hand back from the cached revision", func() error {
		if object(t, env, configMapGVK, ns, "settings") == nil {
			return fmt.Errorf("not there")
		}
		return nil
	})
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.GitUnreachableReason)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); !strings.Contains(msg, "the last applied revision "+good.Status.LastAppliedRevision+" stays applied") {
		t.Errorf("Ready message %q does not say the last good revision stays applied", msg)
	}
	if object(t, env, configMapGVK, ns, "extra") == nil {
		t.Fatal("an object was pruned while the git server was down")
	}
	if got.Status.LastAppliedRevision != good.Status.LastAppliedRevision {
		t.Errorf("lastAppliedRevision %q while down, want %q", got.Status.LastAppliedRevision, good.Status.LastAppliedRevision)
	}

	front.up(t)
	got = appliedAt(t, env, s, newer)
	if object(t, env, configMapGVK, ns, "extra") != nil {
		t.Error("the ConfigMap the newer revision removed was not pruned once the server was back")
	}
	if c := conditions.Get(got, olmsyncv1alpha1.FetchFailedCondition); c != nil {
		t.Errorf("FetchFailed is still there: %+v", c)
	}
	if lp := got.Status.LastPrune; lp == nil || lp.Deleted != 1 || !strings.HasSuffix(lp.Revision, newer) {
		t.Errorf("status.lastPrune = %+v, want extra deleted at %s", lp, newer)
	}
}
