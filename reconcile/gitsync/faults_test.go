package gitsync_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/gitsync"
)

// The environment of the subprocess a fault test runs the manager in.
const (
	childKubeconfigEnv = "OLMSYNC_TEST_CHILD_KUBECONFIG"
	childCacheEnv      = "OLMSYNC_TEST_CHILD_CACHE"
	childCrashAtEnv    = "OLMSYNC_TEST_CHILD_CRASH_AT"
	childMarkerEnv     = "OLMSYNC_TEST_CHILD_MARKER"
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := newManager(t, ctx, cfg, managerOptions{cacheDir: os.Getenv(childCacheEnv)})
	crashAt, marker := os.Getenv(childCrashAtEnv), os.Getenv(childMarkerEnv)
	gitsync.SetAfterApply(m.Syncs, func(obj *olmsyncv1alpha1.Sync, revision string) {
		if crashAt == "" || !strings.HasSuffix(revision, crashAt) {
			return
		}
		if err := os.WriteFile(marker, []byte(revision), 0o600); err != nil {
			panic(err)
		}
		select {} // applied, status not written: SIGKILL comes here
	})
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
}

// child is a manager running in a subprocess.
type child struct {
	cmd    *exec.Cmd
	out    *bytes.Buffer
	marker string
}

// startChild runs the manager in a subprocess against env, with the git cache given, that
// stops right after applying the revision crashAt ("" never).
func startChild(t *testing.T, env *testenv.Env, cache, crashAt string) *child {
	t.Helper()
	kubeconfig := env.UserKubeconfig(t, envtest.User{Name: "fault-test", Groups: []string{"system:masters"}})
	c := &child{out: &bytes.Buffer{}, marker: filepath.Join(t.TempDir(), "applied")}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestManagerChild$", "-test.count=1")
	c.cmd.Env = append(os.Environ(), childKubeconfigEnv+"="+kubeconfig, childCacheEnv+"="+cache,
		childCrashAtEnv+"="+crashAt, childMarkerEnv+"="+c.marker)
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

// killAtCrashPoint kills the subprocess with SIGKILL once it has reached its crash point.
func (c *child) killAtCrashPoint(t *testing.T) {
	t.Helper()
	olmtest.Eventually(t, "the subprocess manager at its crash point", func() error {
		if _, err := os.Stat(c.marker); err != nil {
			return fmt.Errorf("not yet: %w", err)
		}
		return nil
	})
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
