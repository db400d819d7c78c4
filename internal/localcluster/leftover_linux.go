//go:build linux

package localcluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// leftover is an etcd or kube-apiserver process an earlier start on the folder left
// running: its olmsync was killed (SIGKILL, the OOM killer) before it could stop them, and
// envtest starts them in process groups of their own, so they outlived it.
type leftover struct {
	name string
	pid  int
	// fd is a pidfd of the process: a signal through it reaches that process and no
	// other, even if it ends and its pid is reused meanwhile.
	fd int
}

// stopLeftovers stops the etcd and kube-apiserver processes an earlier start on dir left
// running, and says so on out. It runs with the folder's lock held, so no running start
// owns them: a process is one of them when its program is named etcd or kube-apiserver and
// its arguments name the folder's data (--data-dir=dir/etcd) or certificates
// (--cert-dir=dir/pki); its pid alone, which the system may have given to another
// process since, is never trusted. kube-apiserver goes first, then etcd, each with SIGTERM
// and, past processStopTimeout, SIGKILL. A process that cannot be stopped (another user's)
// is an error, and Start refuses as before.
func stopLeftovers(dir string, out io.Writer) error {
	found, err := findLeftovers(dir)
	defer func() {
		for _, l := range found {
			_ = unix.Close(l.fd)
		}
	}()
	if err != nil || len(found) == 0 {
		return err
	}
	var stopped []string
	for _, l := range found {
		if err := stopProcess(l); err != nil {
			return fmt.Errorf("stop the %s (pid %d) an earlier start on %s left running: %w", l.name, l.pid, dir, err)
		}
		stopped = append(stopped, fmt.Sprintf("%s (pid %d)", l.name, l.pid))
	}
	if out != nil {
		fmt.Fprintf(out, "local control plane: stopped %s, left running by an earlier start on %s whose olmsync was killed\n",
			strings.Join(stopped, " and "), dir)
	}
	return nil
}

// findLeftovers lists the processes of the folder's control plane, kube-apiserver first,
// each with a pidfd opened before its arguments were read.
func findLeftovers(dir string) ([]leftover, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("look for processes left running: %w", err)
	}
	want := map[string]string{
		"kube-apiserver": "--cert-dir=" + filepath.Join(dir, pkiDir),
		"etcd":           "--data-dir=" + filepath.Join(dir, etcdDir),
	}
	var out []leftover
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone, or not ours to see
		}
		name, ok := matches(pid, want)
		if !ok {
			_ = unix.Close(fd)
			continue
		}
		l := leftover{name: name, pid: pid, fd: fd}
		if name == "kube-apiserver" {
			out = append([]leftover{l}, out...)
		} else {
			out = append(out, l)
		}
	}
	return out, nil
}

// matches reports which of the programs of want the process is, when its arguments hold
// that program's argument.
func matches(pid int, want map[string]string) (string, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(data) == 0 {
		return "", false
	}
	args := strings.Split(string(bytes.TrimSuffix(data, []byte{0})), "\x00")
	name := filepath.Base(args[0])
	arg, ok := want[name]
	if !ok {
		return "", false
	}
	for _, a := range args[1:] {
		if a == arg {
			return name, true
		}
	}
	return "", false
}

// stopProcess ends a process through its pidfd: SIGTERM, then SIGKILL past
// processStopTimeout, and waits until it is gone.
func stopProcess(l leftover) error {
	if err := unix.PidfdSendSignal(l.fd, unix.SIGTERM, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil // ended meanwhile
		}
		return err
	}
	if exited(l.fd, processStopTimeout) {
		return nil
	}
	if err := unix.PidfdSendSignal(l.fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return err
	}
	if !exited(l.fd, processStopTimeout) {
		return errors.New("still running after SIGKILL")
	}
	return nil
}

// exited waits up to timeout for the process of a pidfd to end (the pidfd turns readable).
func exited(fd int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(min(left, time.Second).Milliseconds())+1)
		switch {
		case err != nil && !errors.Is(err, unix.EINTR):
			return false
		case n > 0:
			return true
		}
	}
}

func closeFD(fd int) error { return unix.Close(fd) }
