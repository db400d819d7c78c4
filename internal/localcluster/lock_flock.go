//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package localcluster

import (
	"errors"
	"os"
	"syscall"
)

// lockDir takes the lock file of a state folder. It is an flock, which the kernel drops
// when the process ends however it ends, so a crash never leaves a stale lock behind. A
// second open of the file conflicts even within one process, so two Starts in one program
// are kept apart too.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return f, nil
}

// unlockDir releases the lock. The file stays: removing it would let a third Start lock a
// new file while a second still waits on the old one.
func unlockDir(f *os.File, _ string) error {
	return f.Close()
}

// etcdStillRunning says whether another process holds etcd's database file at path —
// etcd (through bbolt) flocks it while it runs. Only an etcd left running by a start whose
// process was killed does, since the folder's own lock is ours: envtest starts etcd in a
// process group of its own, so it outlives a killed olmsync, and a new etcd on the same
// data would wait on this lock until Start times out.
func etcdStillRunning(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false // no database yet, or one etcd will report on itself
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return errors.Is(err, syscall.EWOULDBLOCK)
}
