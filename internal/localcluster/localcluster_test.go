package localcluster

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// binaryDir returns the folder of the real kube-apiserver and etcd. Missing binaries skip
// the test with a message, unless CI is set: then they fail it, as in internal/testenv,
// so that a green CI run means the control plane really ran.
func binaryDir(t *testing.T) string {
	t.Helper()
	dir, err := FindBinaries()
	var notFound *BinariesNotFoundError
	if errors.As(err, &notFound) && os.Getenv("CI") == "" {
		t.Skipf("skipping local control plane test: %v", err)
	}
	if err != nil {
		t.Fatalf("find control plane binaries: %v", err)
	}
	return dir
}

func start(t *testing.T, opts Options) *Cluster {
	t.Helper()
	c, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return c
}

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kubeconfigClient connects through the kubeconfig file alone, as kubectl would.
func kubeconfigClient(t *testing.T, path string) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("load kubeconfig %s: %v", path, err)
	}
	return newClient(t, cfg)
}

func TestStateSurvivesRestart(t *testing.T) {
	bin := binaryDir(t)
	dir := t.TempDir()
	ctx := context.Background()

	var out bytes.Buffer
	first := start(t, Options{Dir: dir, BinaryDir: bin, Out: &out})
	if !strings.HasPrefix(first.Version, "v1.36.") {
		t.Errorf("Version = %q, want v1.36.x (the binaries must be built with the Makefile's version ldflags)", first.Version)
	}
	if want := filepath.Join(dir, "kubeconfig"); first.Kubeconfig != want {
		t.Errorf("Kubeconfig = %q, want %q", first.Kubeconfig, want)
	}
	st, err := os.Stat(first.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Errorf("kubeconfig mode = %v, want 0600", perm)
	}
	if !strings.Contains(out.String(), first.Kubeconfig) || !strings.Contains(out.String(), first.Version) {
		t.Errorf("Out does not name the kubeconfig and version:\n%s", out.String())
	}

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default"},
		Data:       map[string]string{"applied": "before the restart"},
	}
	if err := newClient(t, first.Config).Create(ctx, cm); err != nil {
		t.Fatalf("create ConfigMap: %v", err)
	}
	got := &corev1.ConfigMap{}
	if err := kubeconfigClient(t, first.Kubeconfig).Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		t.Fatalf("read ConfigMap through the kubeconfig file: %v", err)
	}
	if err := first.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pki")); !os.IsNotExist(err) {
		t.Errorf("certificates left behind after Stop (stat: %v)", err)
	}

	second := start(t, Options{Dir: dir, BinaryDir: bin})
	if second.Config.Host == "" || second.Version != first.Version {
		t.Errorf("second start: host %q, version %q (first %q)", second.Config.Host, second.Version, first.Version)
	}
	got = &corev1.ConfigMap{}
	if err := kubeconfigClient(t, second.Kubeconfig).Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		t.Fatalf("ConfigMap after restart, through the rewritten kubeconfig: %v", err)
	}
	if got.Data["applied"] != "before the restart" {
		t.Errorf("ConfigMap data after restart = %v", got.Data)
	}
}

func TestSecondStartOnSameDirFails(t *testing.T) {
	bin := binaryDir(t)
	dir := t.TempDir()
	ctx := context.Background()
	first := start(t, Options{Dir: dir, BinaryDir: bin})

	second, err := Start(ctx, Options{Dir: dir, BinaryDir: bin})
	if err == nil {
		_ = second.Stop()
		t.Fatal("second Start on a folder in use succeeded")
	}
	var inUse *InUseError
	if !errors.As(err, &inUse) {
		t.Fatalf("second Start: %v, want an *InUseError", err)
	}
	if inUse.Dir != dir || inUse.PID != os.Getpid() {
		t.Errorf("InUseError = %+v, want Dir %s and PID %d", inUse, dir, os.Getpid())
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "already running") {
		t.Errorf("message does not say which folder is in use: %s", msg)
	}

	// The refused Start must have left the running one alone.
	var ns corev1.NamespaceList
	if err := newClient(t, first.Config).List(ctx, &ns); err != nil {
		t.Fatalf("first control plane after the refused second Start: %v", err)
	}
}

// isolate points every place FindBinaries looks at empty folders of the test's own,
// except those the test fills, and returns the folders: KUBEBUILDER_ASSETS, the folder of
// the executable, the working directory and the cache root.
func isolate(t *testing.T) (assets, exeDir, cwd, cache string) {
	t.Helper()
	assets, exeDir, cwd, cache = t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Chdir(cwd)
	saved := executable
	executable = func() (string, error) { return filepath.Join(exeDir, "olmsync"), nil }
	t.Cleanup(func() { executable = saved })
	return assets, exeDir, cwd, cache
}

// fakeBinaries puts executable files named kube-apiserver and etcd (or only those given)
// into dir.
func fakeBinaries(t *testing.T, dir string, names ...string) string {
	t.Helper()
	if len(names) == 0 {
		names = binaries
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFindBinariesNotFound(t *testing.T) {
	assets, exeDir, cwd, cache := isolate(t)
	// A half-finished build: not enough.
	fakeBinaries(t, filepath.Join(cache, "olmsync", "envtest", "kube-v1.36.3-etcd-v3.6.8"), "etcd")

	dir, err := FindBinaries()
	var notFound *BinariesNotFoundError
	if !errors.As(err, &notFound) {
		t.Fatalf("FindBinaries = %q, %v; want a *BinariesNotFoundError", dir, err)
	}
	if !strings.Contains(err.Error(), "make envtest") {
		t.Errorf("message does not say to run `make envtest`: %s", err)
	}
	want := []string{
		assets,
		filepath.Join(exeDir, "k8s"),
		filepath.Join(cwd, "bin", "k8s"),
		filepath.Join(cache, "olmsync", "envtest", "kube-*-etcd-*"),
	}
	if !slices.Equal(notFound.Searched, want) {
		t.Errorf("Searched = %q, want %q", notFound.Searched, want)
	}
	for _, place := range want {
		if !strings.Contains(err.Error(), place) {
			t.Errorf("message does not list %s: %s", place, err)
		}
	}

	// Start reports the same, before it touches the state folder.
	state := filepath.Join(t.TempDir(), "state")
	if _, err := Start(context.Background(), Options{Dir: state}); !errors.As(err, &notFound) {
		t.Errorf("Start without binaries: %v, want a *BinariesNotFoundError", err)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("Start without binaries created the state folder (stat: %v)", err)
	}
}

func TestFindBinariesOrder(t *testing.T) {
	cacheBuild := func(cache, name string) string {
		return filepath.Join(cache, "olmsync", "envtest", name)
	}
	tests := []struct {
		name string
		// fill puts binaries into some of the places and returns the folder to be found.
		fill func(t *testing.T, assets, exeDir, cwd, cache string) string
	}{{
		name: "KUBEBUILDER_ASSETS first",
		fill: func(t *testing.T, assets, exeDir, cwd, cache string) string {
			fakeBinaries(t, filepath.Join(exeDir, "k8s"))
			fakeBinaries(t, filepath.Join(cwd, "bin", "k8s"))
			return fakeBinaries(t, assets)
		},
	}, {
		name: "k8s next to the executable before ./bin/k8s",
		fill: func(t *testing.T, assets, exeDir, cwd, cache string) string {
			fakeBinaries(t, filepath.Join(cwd, "bin", "k8s"))
			fakeBinaries(t, cacheBuild(cache, "kube-v1.36.3-etcd-v3.6.8"))
			return fakeBinaries(t, filepath.Join(exeDir, "k8s"))
		},
	}, {
		name: "./bin/k8s before the cache",
		fill: func(t *testing.T, assets, exeDir, cwd, cache string) string {
			fakeBinaries(t, cacheBuild(cache, "kube-v1.36.3-etcd-v3.6.8"))
			return fakeBinaries(t, filepath.Join(cwd, "bin", "k8s"))
		},
	}, {
		name: "the cache's highest complete version",
		fill: func(t *testing.T, assets, exeDir, cwd, cache string) string {
			fakeBinaries(t, cacheBuild(cache, "kube-v1.36.3-etcd-v3.6.8"))
			fakeBinaries(t, cacheBuild(cache, "kube-v1.36.9-etcd-v3.6.8"))
			fakeBinaries(t, cacheBuild(cache, "kube-v1.37.0-etcd-v3.6.9"), "etcd") // half-built
			return fakeBinaries(t, cacheBuild(cache, "kube-v1.36.10-etcd-v3.6.8"))
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assets, exeDir, cwd, cache := isolate(t)
			want := tt.fill(t, assets, exeDir, cwd, cache)
			got, err := FindBinaries()
			if err != nil {
				t.Fatalf("FindBinaries: %v", err)
			}
			if got != want {
				t.Errorf("FindBinaries = %s, want %s", got, want)
			}
		})
	}
}
