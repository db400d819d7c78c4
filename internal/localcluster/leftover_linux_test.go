//go:build linux

package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The environment of TestKilledStartChild.
const (
	childDirEnv = "OLMSYNC_TEST_LOCAL_DIR"
	childBinEnv = "OLMSYNC_TEST_LOCAL_BIN"
)

// TestKilledStartChild is not a test of its own: it is the olmsync that
// TestStartStopsWhatAKilledStartLeft kills. It starts a control plane on $OLMSYNC_TEST_LOCAL_DIR,
// says "ready", and waits for SIGKILL.
func TestKilledStartChild(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("the subprocess of TestStartStopsWhatAKilledStartLeft")
	}
	if _, err := Start(context.Background(), Options{Dir: dir, BinaryDir: os.Getenv(childBinEnv)}); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("ready\n")
	select {}
}

// TestStartStopsWhatAKilledStartLeft (issue 30): SIGKILL of `olmsync run --local` left its
// etcd and kube-apiserver running (envtest starts them in process groups of their own), and
// the next start refused until they were killed by hand. Now the next start stops them —
// found by their program and the folder their arguments name, never by a pid alone — and
// starts afresh on the same data; a process of another folder is left alone.
func TestStartStopsWhatAKilledStartLeft(t *testing.T) {
	bin := binaryDir(t)
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestKilledStartChild$")
	child.Env = append(os.Environ(), childDirEnv+"="+dir, childBinEnv+"="+bin)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill() })
	ready := make(chan bool, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if s.Text() == "ready" {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the child ended before its control plane was ready")
		}
	case <-time.After(3 * processStartTimeout):
		t.Fatal("the child's control plane did not start")
	}
	ctx := context.Background()
	if err := kubeconfigClient(t, filepath.Join(dir, kubeconfigFile)).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}); err != nil {
		t.Fatal(err)
	}
	left, err := findLeftovers(dir)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, l := range left {
		pids = append(pids, l.pid)
		_ = closeFD(l.fd)
	}
	if len(pids) != 2 {
		t.Fatalf("found %d processes of the child's control plane, want kube-apiserver and etcd", len(pids))
	}

	// A process of another folder, named etcd: not this folder's to stop.
	other := exec.Command("sh", "-c", "while :; do sleep 1; done", "etcd", "--data-dir="+filepath.Join(t.TempDir(), etcdDir))
	other.Args[0] = "etcd"
	other.Path, _ = exec.LookPath("sh")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if !etcdStillRunning(filepath.Join(dir, etcdDir, "member", "snap", "db")) {
		t.Fatal("etcd did not outlive its killed olmsync: nothing to test")
	}

	var said bytes.Buffer
	c := start(t, Options{Dir: dir, BinaryDir: bin, Out: &said})
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d of the killed start still runs", pid)
		}
	}
	for _, want := range []string{"stopped kube-apiserver (pid " + strconv.Itoa(pids[0]) + ") and etcd (pid " + strconv.Itoa(pids[1]) + ")", "whose olmsync was killed"} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("Start said %q, want %q", said.String(), want)
		}
	}
	var ns corev1.Namespace
	if err := newClient(t, c.Config).Get(ctx, client.ObjectKey{Name: "kept"}, &ns); err != nil {
		t.Errorf("the namespace created before the kill: %v", err)
	}
	if !alive(other.Process.Pid) {
		t.Error("the etcd of another folder was stopped")
	}
}

// alive reports whether the process runs: it exists and is not a zombie waiting for its
// parent (the killed child's processes go to init, which may not reap them).
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}
