// Package testenv runs olmsync's tests against a real kube-apiserver and etcd through
// controller-runtime's envtest, with the CRDs generated into api/crds installed.
//
// The binaries are the pinned ones `make envtest` builds from source (see the Makefile and
// hack/envtest); they are found through KUBEBUILDER_ASSETS, else in bin/k8s of the
// repository. When they are missing a test is skipped with a message saying how to build
// them, unless CI is set: then it fails, so a green CI run always means the envtest tests ran.
//
// A package's TestMain calls Run; each test that needs the API server calls Get, which
// starts one control plane for the whole test binary on first use.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/olmsync/olmsync/api/crds"
	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/api/operators"
)

// Env is a running control plane with olmsync's CRDs installed.
type Env struct {
	Config *rest.Config
	Client client.Client
	Scheme *kruntime.Scheme
	env    *envtest.Environment
}

var (
	once    sync.Once
	shared  *Env
	initErr error
)

// ErrNoAssets says the kube-apiserver and etcd binaries were not found.
var ErrNoAssets = errors.New("envtest binaries (kube-apiserver, etcd) not found: run `make envtest` or set KUBEBUILDER_ASSETS")

// Scheme returns a scheme with the built-in kinds, apiextensions and every olmsync API.
func Scheme() *kruntime.Scheme {
	s := kruntime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(operators.AddToScheme(s))
	utilruntime.Must(olmsyncv1alpha1.AddToScheme(s))
	return s
}

// AssetsDir returns the folder holding kube-apiserver and etcd.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(file))), "bin", "k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%w (looked in %s)", ErrNoAssets, dir)
		}
	}
	return dir, nil
}

// Get returns the shared control plane, starting it on first use. It skips the test when
// the binaries are missing and CI is unset, and fails it when they are missing under CI.
func Get(tb testing.TB) *Env {
	tb.Helper()
	once.Do(func() { shared, initErr = start() })
	if errors.Is(initErr, ErrNoAssets) && os.Getenv("CI") == "" {
		tb.Skipf("skipping envtest test: %v", initErr)
	}
	if initErr != nil {
		tb.Fatalf("start envtest control plane: %v", initErr)
	}
	return shared
}

// Run runs a package's tests and stops the control plane if a test started it. Use it
// from TestMain: os.Exit(testenv.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop envtest control plane: %v\n", err)
		}
	}
	return code
}

func start() (*Env, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	all, err := crds.All()
	if err != nil {
		return nil, err
	}
	s := Scheme()
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDInstallOptions:     envtest.CRDInstallOptions{CRDs: all, Scheme: s},
		Scheme:                s,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Client: c, Scheme: s, env: env}, nil
}

// ServerVersion returns the version the API server reports. The Makefile sets it with
// -ldflags; an unset version reads v0.0.0 and breaks every minKubeVersion check.
func (e *Env) ServerVersion() (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return "", err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// KubeConfig returns a kubeconfig for the control plane, as a user in system:masters, for
// tests of commands that take --kubeconfig.
func (e *Env) KubeConfig() ([]byte, error) {
	u, err := e.env.AddUser(envtest.User{Name: "olmsync-test", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	return u.KubeConfig()
}
