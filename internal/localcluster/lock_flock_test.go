//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package localcluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An etcd left running by a killed olmsync holds the flock on its database; Start must
// say so at once rather than start a second etcd that waits on the lock until it times
// out. The flock is taken here the way etcd's bbolt takes it, so no real etcd is needed.
func TestStartRefusesEtcdLeftRunning(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "etcd", "member", "snap", "db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(db, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	bin := fakeBinaries(t, t.TempDir())
	_, err = Start(context.Background(), Options{Dir: dir, BinaryDir: bin})
	var inUse *InUseError
	if !errors.As(err, &inUse) || !inUse.LeftRunning {
		t.Fatalf("Start on the data of a running etcd: %v, want an *InUseError with LeftRunning", err)
	}
	if !strings.Contains(err.Error(), "--data-dir="+filepath.Join(dir, "etcd")) {
		t.Errorf("message does not say which etcd to stop: %s", err)
	}
	// The left-over kube-apiserver still reads its certificates: they must stay.
	pki := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), Options{Dir: dir, BinaryDir: bin}); !errors.As(err, &inUse) {
		t.Fatalf("second Start on the data of a running etcd: %v", err)
	}
	if _, err := os.Stat(pki); err != nil {
		t.Errorf("refused Start removed the certificates of the left-over kube-apiserver: %v", err)
	}

	// The refused Start released the folder: once that etcd is gone, Start gets as far
	// as the (fake) binaries.
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Start(context.Background(), Options{Dir: dir, BinaryDir: bin})
	if err == nil || errors.As(err, &inUse) {
		t.Fatalf("Start after that etcd stopped: %v, want a failure to run the fake binaries", err)
	}
}
