package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/olmsync/olmsync/render/rendertest"
)

// TestCheckStopsOnSignal: SIGTERM during a render was ignored for 10 to 25 seconds. The
// check now stops at once — the context is checked between apps and builds, and what
// cannot be interrupted is cut short after a second — with the shell's exit code for
// the signal, and writes no report. The time it took is logged, not asserted.
func TestCheckStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("renders a large repository")
	}
	// 2,400 apps and 38,000 objects: far more than a check can render in the second
	// before the signal.
	repo := t.TempDir()
	shape := rendertest.Shape{Clusters: 200, AppsPerCluster: 11}
	if err := shape.Write(filesys.MakeFsOnDisk(), repo); err != nil {
		t.Fatal(err)
	}
	// A second in, discovery is reading the repository; four seconds in, kustomize is
	// building apps.
	for _, tt := range []struct {
		sig   syscall.Signal
		after time.Duration
		want  int
	}{{syscall.SIGTERM, time.Second, 143}, {syscall.SIGINT, 4 * time.Second, 130}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "check", repo, "-o", "json")
			cmd.Env = append(os.Environ(), runMainEnv+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			time.Sleep(tt.after)
			sent := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("olmsync check did not stop within two minutes of %v", tt.sig)
			}
			t.Logf("%v %v after the start: stopped %v later", tt.sig, tt.after, time.Since(sent).Round(time.Millisecond))
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != tt.want {
				t.Errorf("exit: %v, want code %d\nstderr:\n%s", err, tt.want, stderr.String())
			}
			if stdout.Len() > 0 {
				t.Errorf("a report was written: the check finished before the signal, or ignored it:\n%.300s", stdout.String())
			}
			if !strings.Contains(stderr.String(), "olmsync: stopped by "+tt.sig.String()) {
				t.Errorf("stderr does not say why it stopped:\n%s", stderr.String())
			}
		})
	}
}
