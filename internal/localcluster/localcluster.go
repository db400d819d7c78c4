package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The layout of a state folder.
const (
	etcdDir        = "etcd"       // etcd's data: the one part kept across starts
	pkiDir         = "pki"        // the API server's certificates and keys, new at each start
	kubeconfigFile = "kubeconfig" // the admin kubeconfig, rewritten at each start
	lockFile       = "lock"       // held while a control plane runs on the folder
	etcdLog        = "etcd.log"
	apiserverLog   = "kube-apiserver.log"
)

// contextName names the cluster, user and context of the kubeconfig written, so that it
// reads clearly when merged into a person's other kubeconfigs.
const contextName = "olmsync-local"

// Generous next to envtest's 20s defaults: a first start on a busy laptop creates etcd's
// files and the API server's bootstrap objects, and a stop lets etcd sync its data.
const (
	processStartTimeout = 90 * time.Second
	processStopTimeout  = 30 * time.Second
	readyTimeout        = 90 * time.Second
)

// Options configure Start.
type Options struct {
	// Dir holds the control plane's state: etcd's data (kept across restarts, so what was
	// applied is still there next time), the certificates, the logs of etcd and
	// kube-apiserver, and the kubeconfig written for the user. Required; created when
	// missing.
	Dir string
	// BinaryDir holds kube-apiserver and etcd; found by FindBinaries when empty.
	BinaryDir string
	// Out gets the lines a person should see (where the server listens, where the
	// kubeconfig is); may be nil.
	Out io.Writer
}

// Cluster is a running local control plane.
type Cluster struct {
	// Config connects as an admin (group system:masters).
	Config *rest.Config
	// Kubeconfig is the path of the kubeconfig file written under Dir for the same admin,
	// usable with kubectl while the control plane runs.
	Kubeconfig string
	// Version is the API server's gitVersion (v1.36.3 for the pinned build).
	Version string
	// Dir is the state folder, absolute.
	Dir string

	plane    *envtest.ControlPlane
	lock     *os.File
	logs     []*os.File
	stopOnce sync.Once
	stopErr  error
}

// InUseError says another control plane runs on the state folder: two etcd processes
// on one data folder would corrupt it, so Start refuses.
type InUseError struct {
	Dir string
	// PID is the process holding the folder, 0 when unknown.
	PID int
	// LeftRunning says the folder is free but an etcd of an earlier start still runs on
	// its data: that start's process was killed before it could stop etcd.
	LeftRunning bool
}

func (e *InUseError) Error() string {
	if e.LeftRunning {
		return fmt.Sprintf("local control plane in %s: an etcd of an earlier start still runs on its data (its olmsync was killed): stop the etcd and kube-apiserver processes started with --data-dir=%s and --cert-dir=%s",
			e.Dir, filepath.Join(e.Dir, etcdDir), filepath.Join(e.Dir, pkiDir))
	}
	by := "another process"
	if e.PID > 0 {
		by = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("local control plane in %s is already running (%s holds %s): stop it first or use another folder",
		e.Dir, by, filepath.Join(e.Dir, lockFile))
}

// errLocked is what lockDir returns when the lock is held; Start turns it into an
// *InUseError.
var errLocked = errors.New("lock held")

// Start starts etcd and kube-apiserver on loopback with their state in opts.Dir, waits
// until the API server is ready, and writes an admin kubeconfig to Dir/kubeconfig (mode
// 0600). Ports are free ones picked at each start, and the certificates are made anew
// each time, so a kubeconfig from an earlier start does not work: read the file again.
//
// Start does not install olmsync's CRDs; the caller does (`olmsync run --install-crds`,
// reconcile.InstallCRDs), so that a local cluster is set up like any other.
//
// A second Start on a folder in use fails with an *InUseError. envtest starts etcd and
// kube-apiserver in process groups of their own, so they outlive a SIGKILL of olmsync (an
// interrupt from the terminal reaches olmsync alone, which stops them): a Start after one
// whose process was killed stops what it left running (on Linux; elsewhere it fails with
// an *InUseError naming the processes to stop). Missing binaries fail with a
// *BinariesNotFoundError. Stop the returned Cluster to end the processes.
func Start(ctx context.Context, opts Options) (_ *Cluster, retErr error) {
	if opts.Dir == "" {
		return nil, errors.New("start local control plane: no state folder given")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("start local control plane: %w", err)
	}
	bin := opts.BinaryDir
	if bin == "" {
		if bin, err = FindBinaries(); err != nil {
			return nil, err
		}
	} else if !hasBinaries(bin) {
		abs, _ := filepath.Abs(bin)
		return nil, &BinariesNotFoundError{Searched: []string{abs}}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// 0700: the folder holds private keys and an admin kubeconfig.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("start local control plane: %w", err)
	}

	c := &Cluster{Dir: dir, Kubeconfig: filepath.Join(dir, kubeconfigFile)}
	if c.lock, err = lock(dir); err != nil {
		return nil, err
	}
	// With the lock held, no running start owns the folder's processes: any still running
	// were left by a start whose olmsync was killed. Stopped before anything in the
	// folder changes: the left-over kube-apiserver still reads its certificates there.
	if err := stopLeftovers(dir, opts.Out); err != nil {
		_ = unlockDir(c.lock, filepath.Join(dir, lockFile))
		return nil, err
	}
	if etcdStillRunning(filepath.Join(dir, etcdDir, "member", "snap", "db")) {
		_ = unlockDir(c.lock, filepath.Join(dir, lockFile))
		return nil, &InUseError{Dir: dir, LeftRunning: true}
	}
	defer func() {
		if retErr != nil {
			_ = c.stop()
		}
	}()

	// envtest makes the serving CA only when apiserver.crt is absent, and keeps it in
	// memory alone; on a folder with an earlier start's certificates it would leave the
	// CA empty and every client config unusable. So the certificates start afresh.
	pki := filepath.Join(dir, pkiDir)
	if err := os.RemoveAll(pki); err != nil {
		return nil, fmt.Errorf("start local control plane: %w", err)
	}
	data := filepath.Join(dir, etcdDir)
	for _, d := range []string{pki, data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("start local control plane: %w", err)
		}
	}
	etcdOut, err := c.openLog(etcdLog)
	if err != nil {
		return nil, err
	}
	apiOut, err := c.openLog(apiserverLog)
	if err != nil {
		return nil, err
	}

	etcd := &envtest.Etcd{
		Path:         filepath.Join(bin, "etcd"),
		DataDir:      data,
		StartTimeout: processStartTimeout,
		StopTimeout:  processStopTimeout,
		Out:          etcdOut,
		Err:          etcdOut,
	}
	// envtest turns fsync off for speed; this data is meant to outlive a crash of the
	// laptop, not only a clean stop.
	etcd.Configure().Set("unsafe-no-fsync", "false")
	api := &envtest.APIServer{
		// Explicit paths: envtest's own lookup lets $KUBEBUILDER_ASSETS override them.
		Path:         filepath.Join(bin, "kube-apiserver"),
		CertDir:      pki,
		StartTimeout: processStartTimeout,
		StopTimeout:  processStopTimeout,
		Out:          apiOut,
		Err:          apiOut,
	}
	// The ControlPlane, not envtest.Environment: Environment retries a failed start with
	// the same certificate folder (see above), lets KUBEBUILDER_ASSETS override the
	// binaries, and installs CRDs, which is the caller's business here.
	c.plane = &envtest.ControlPlane{Etcd: etcd, APIServer: api}
	if err := c.plane.Start(); err != nil {
		return nil, fmt.Errorf("start local control plane in %s: %w (see %s and %s)",
			dir, err, filepath.Join(dir, etcdLog), filepath.Join(dir, apiserverLog))
	}

	admin, err := c.plane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("start local control plane: add admin user: %w", err)
	}
	c.Config = admin.Config()
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("start local control plane: %w", err)
	}
	if err := waitReady(ctx, dc); err != nil {
		return nil, fmt.Errorf("start local control plane in %s: %w (see %s)", dir, err, filepath.Join(dir, apiserverLog))
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("start local control plane: server version: %w", err)
	}
	c.Version = v.GitVersion
	if err := writeKubeconfig(c.Kubeconfig, c.Config); err != nil {
		return nil, fmt.Errorf("start local control plane: write kubeconfig: %w", err)
	}
	if opts.Out != nil {
		fmt.Fprintf(opts.Out, "local control plane: Kubernetes %s at %s, state in %s\n", c.Version, strings.TrimSuffix(c.Config.Host, "/"), dir)
		fmt.Fprintf(opts.Out, "kubeconfig: %s (kubectl --kubeconfig %s get namespaces)\n", c.Kubeconfig, c.Kubeconfig)
	}
	return c, nil
}

// Stop stops kube-apiserver and etcd, removes the certificates (the next start makes new
// ones) and releases the folder. etcd's data and the kubeconfig stay. Calling it again
// returns the first call's result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	var errs []error
	if c.plane != nil {
		if err := c.plane.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop local control plane in %s: %w", c.Dir, err))
		}
	}
	// The CA keys are of no use once the server is gone.
	if err := os.RemoveAll(filepath.Join(c.Dir, pkiDir)); err != nil {
		errs = append(errs, err)
	}
	for _, f := range c.logs {
		errs = append(errs, f.Close())
	}
	if c.lock != nil {
		errs = append(errs, unlockDir(c.lock, filepath.Join(c.Dir, lockFile)))
	}
	return errors.Join(errs...)
}

// lock takes the folder's lock and writes this process's id into it, for the message a
// second Start gives.
func lock(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFile)
	f, err := lockDir(path)
	if errors.Is(err, errLocked) {
		pid := 0
		if b, err := os.ReadFile(path); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		return nil, &InUseError{Dir: dir, PID: pid}
	}
	if err != nil {
		return nil, fmt.Errorf("lock local control plane folder: %w", err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// openLog opens a process's log file afresh, so that it holds the current start only.
func (c *Cluster) openLog(name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(c.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start local control plane: %w", err)
	}
	c.logs = append(c.logs, f)
	return f, nil
}

// waitReady waits until the API server reports ready and has created the default
// namespace. envtest's own start waits only for /healthz; on a first start the
// bootstrap objects (RBAC roles, namespaces) come a little later, and a caller applying
// at once would race them.
func waitReady(ctx context.Context, dc *discovery.DiscoveryClient) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, readyTimeout, true, func(ctx context.Context) (bool, error) {
		for _, path := range []string{"/readyz", "/api/v1/namespaces/default"} {
			// An error here means not ready yet: kept for the message, retried until the
			// deadline.
			if _, last = dc.RESTClient().Get().AbsPath(path).DoRaw(ctx); last != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("wait for the API server to be ready: %w (last: %w)", err, last)
	}
	if err != nil {
		return fmt.Errorf("wait for the API server to be ready: %w", err)
	}
	return nil
}

// writeKubeconfig writes cfg as a kubeconfig at path with mode 0600: into a new file
// (created 0600) renamed over the old one, so that neither a file left with wider
// permissions nor a reader catching it half-written sees the admin key.
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[contextName] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	kc.CurrentContext = contextName
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".kubeconfig-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename there is nothing left to remove
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
