// Package testenv runs olmsync's tests against a real kube-apiserver and etcd through
// controller-runtime's envtest, with the CRDs generated into api/crds installed.
//
// The binaries are the pinned ones `make envtest` builds from source (see the Makefile and
// hack/envtest); they are found through KUBEBUILDER_ASSETS, else in bin/k8s of the
// repository. When they are missing a test is skipped with a message saying how to build
// them, unless CI is set: then it fails, so a green CI run always means the envtest tests ran.
//
// A package's TestMain calls Run; each test that needs the API server calls Get, which
// starts one control plane for the whole test binary on first use. GetBare starts another,
// without the CRDs, for tests of a cluster that has no OLM.
package testenv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/api/crds"
	"github.com/olmsync/olmsync/internal/kube"
)

// Env is a running control plane with olmsync's CRDs installed.
type Env struct {
	Config *rest.Config
	Client client.Client
	Scheme *kruntime.Scheme
	env    *envtest.Environment

	stopOnce sync.Once // a plane of Own stops once: by Stop or when its test ends
}

// plane is one control plane of the test binary, started on first use.
type plane struct {
	once sync.Once
	env  *Env
	err  error
}

var (
	shared = &plane{} // with olmsync's CRDs
	bare   = &plane{} // without them
)

// ErrNoAssets says the kube-apiserver and etcd binaries were not found.
var ErrNoAssets = errors.New("envtest binaries (kube-apiserver, etcd) not found: run `make envtest` or set KUBEBUILDER_ASSETS")

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
	return shared.get(tb, true)
}

// GetBare returns a second control plane of the test binary, without olmsync's CRDs (a
// cluster without OLM), starting it on first use. It skips or fails as Get does.
func GetBare(tb testing.TB) *Env {
	tb.Helper()
	return bare.get(tb, false)
}

func (p *plane) get(tb testing.TB, withCRDs bool) *Env {
	tb.Helper()
	p.once.Do(func() { p.env, p.err = start(withCRDs) })
	if errors.Is(p.err, ErrNoAssets) && os.Getenv("CI") == "" {
		tb.Skipf("skipping envtest test: %v", p.err)
	}
	if p.err != nil {
		tb.Fatalf("start envtest control plane: %v", p.err)
	}
	return p.env
}

// Run runs a package's tests and stops the control planes tests started. Use it from
// TestMain: os.Exit(testenv.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	for _, p := range []*plane{shared, bare} {
		if p.env != nil {
			if err := p.env.env.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "stop envtest control plane: %v\n", err)
			}
		}
	}
	return code
}

// Own starts a control plane for one test alone, with olmsync's CRDs, stopped when the
// test ends: for a test that stops and starts its API server (StopAPIServer,
// StartAPIServer), which would disturb every other test on the shared one. It skips or
// fails as Get does.
func Own(tb testing.TB) *Env {
	tb.Helper()
	// A certificate folder and a port of the test's own, both kept across a restart of the
	// API server, so that clients of the first start still reach and trust the second.
	// envtest retries a start on the port it is given: a port another process took
	// between freePort and kube-apiserver's bind (a CI run failed so, five times in 7 s)
	// needs another port.
	var env *Env
	var err error
	for range ownPortTries {
		var port int
		if port, err = freePort(); err != nil {
			tb.Fatal(err)
		}
		api := &envtest.APIServer{CertDir: tb.TempDir()}
		api.Address, api.Port = "127.0.0.1", strconv.Itoa(port)
		if env, err = startWith(true, api); err == nil || errors.Is(err, ErrNoAssets) {
			break
		}
		tb.Logf("start envtest control plane on port %d: %v; trying another port", port, err)
	}
	if errors.Is(err, ErrNoAssets) && os.Getenv("CI") == "" {
		tb.Skipf("skipping envtest test: %v", err)
	}
	if err != nil {
		tb.Fatalf("start envtest control plane: %v", err)
	}
	tb.Cleanup(func() { env.Stop(tb) })
	return env
}

// Stop stops a control plane of Own before its test ends — a benchmark's round that must
// not leave an idle plane beside the next one's —, or when it ends; only the first call
// stops it.
func (e *Env) Stop(tb testing.TB) {
	tb.Helper()
	e.stopOnce.Do(func() {
		if err := e.env.Stop(); err != nil {
			tb.Errorf("stop envtest control plane: %v", err)
		}
	})
}

// StopAPIServer stops kube-apiserver, leaving etcd running: clients are refused until
// StartAPIServer. It sends SIGTERM and, when the server has not ended within 5 s (its
// graceful shutdown waits on the clients' watches), SIGKILL, as a crash would; it returns
// once nothing listens on its address. Only for a control plane of Own.
func (e *Env) StopAPIServer(tb testing.TB) {
	tb.Helper()
	api := e.env.ControlPlane.APIServer
	api.StopTimeout = 5 * time.Second
	if err := api.Stop(); err != nil {
		if !strings.Contains(err.Error(), "timeout waiting for process") {
			tb.Fatalf("stop kube-apiserver: %v", err)
		}
		tb.Logf("kube-apiserver did not end within 5 s of SIGTERM and was killed")
	}
	addr := net.JoinHostPort(api.Address, api.Port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			tb.Fatalf("kube-apiserver still listens on %s", addr)
		}
	}
}

// StartAPIServer starts kube-apiserver again, on the same address, with the same
// certificates and etcd, and waits until it serves.
func (e *Env) StartAPIServer(tb testing.TB) {
	tb.Helper()
	if err := e.env.ControlPlane.APIServer.Start(); err != nil {
		tb.Fatalf("start kube-apiserver again: %v", err)
	}
}

// ownPortTries is how many ports Own tries its control plane on.
const ownPortTries = 3

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(withCRDs bool) (*Env, error) { return startWith(withCRDs, nil) }

// DebugSocketEnv, when set, is the path of a unix socket on which kube-apiserver serves
// /debug/pprof (its --debug-socket-path; the secure port does not serve it in the pinned
// version): for a benchmark that profiles what its requests cost the API server.
const DebugSocketEnv = "OLMSYNC_TESTENV_DEBUG_SOCKET"

func startWith(withCRDs bool, api *envtest.APIServer) (*Env, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	s := kube.Scheme()
	env := &envtest.Environment{BinaryAssetsDirectory: dir, Scheme: s}
	if api == nil {
		api = &envtest.APIServer{}
	}
	if socket := os.Getenv(DebugSocketEnv); socket != "" {
		api.Configure().Set("debug-socket-path", socket)
	}
	// The API server calls a webhook or an aggregated API at an endpoint of its Service
	// (an EndpointSlice), not at the Service's cluster IP, which nothing routes here: a test
	// serves one on loopback behind an EndpointSlice to 127.0.0.1 (olmtest.ServeWebhook).
	api.Configure().Set("enable-aggregator-routing", "true")
	env.ControlPlane.APIServer = api
	if withCRDs {
		all, err := crds.All()
		if err != nil {
			return nil, err
		}
		env.CRDInstallOptions = envtest.CRDInstallOptions{CRDs: all, Scheme: s}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
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

// UserKubeconfig writes a kubeconfig file for a user of the control plane (envtest.User:
// a name and groups; its rights are what RBAC grants them, system:masters all) and
// returns its path. Its one context, "envtest", is the current one.
func (e *Env) UserKubeconfig(tb testing.TB, user envtest.User) string {
	tb.Helper()
	u, err := e.env.AddUser(user, nil)
	if err != nil {
		tb.Fatalf("add envtest user %s: %v", user.Name, err)
	}
	data, err := u.KubeConfig()
	if err != nil {
		tb.Fatalf("kubeconfig of envtest user %s: %v", user.Name, err)
	}
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Create creates the objects of YAML manifests on the control plane — documents split on
// "---" lines, Lists unpacked, Namespaces first — and then writes each object's status
// through its status subresource, so that a test can set up what a cluster reports (a
// Subscription's installedCSV, a CSV's phase). A namespace an object names that no
// manifest creates is created too. Every object must be new: the control plane is shared
// by the package's tests, so each test uses namespaces of its own.
func (e *Env) Create(tb testing.TB, manifests string) {
	tb.Helper()
	ctx := context.Background()
	var objs []*unstructured.Unstructured
	for doc := range strings.SplitSeq("\n"+manifests, "\n---") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			tb.Fatalf("testenv.Create: %v", err)
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				tb.Fatalf("testenv.Create: %v", err)
			}
			for i := range list.Items {
				objs = append(objs, &list.Items[i])
			}
			continue
		}
		if u.GetKind() != "" {
			objs = append(objs, u)
		}
	}
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return cmp.Compare(boolInt(a.GetKind() != "Namespace"), boolInt(b.GetKind() != "Namespace"))
	})
	namespaces := map[string]bool{}
	for _, u := range objs {
		if ns := u.GetNamespace(); ns != "" && !namespaces[ns] {
			namespaces[ns] = true
			err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				tb.Fatalf("testenv.Create: namespace %s: %v", ns, err)
			}
		}
		status, hasStatus := u.Object["status"]
		if err := e.Client.Create(ctx, u); err != nil {
			tb.Fatalf("testenv.Create: %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		if u.GetKind() == "Namespace" {
			namespaces[u.GetName()] = true
		}
		if hasStatus {
			u.Object["status"] = status
			if err := e.Client.Status().Update(ctx, u); err != nil {
				tb.Fatalf("testenv.Create: status of %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FreeAddr is a loopback address no one listens on now, for a server a test starts (a
// manager's webhook receiver, metrics or probes).
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
