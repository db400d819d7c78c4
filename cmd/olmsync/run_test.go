//go:build !olmsync_light

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/reconcile"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// syncBuffer is an io.Writer the command and the test can share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func kubeconfigFile(t *testing.T, env *testenv.Env) string {
	t.Helper()
	return env.UserKubeconfig(t, envtest.User{Name: "olmsync-run", Groups: []string{"system:masters"}})
}

// startRun runs `olmsync run args...` until the test ends; it returns its output and a
// channel with its error.
func startRun(t *testing.T, args ...string) (*syncBuffer, <-chan error) {
	t.Helper()
	return startRunExpecting(t, false, args...)
}

// startRunExpecting is startRun for a test in which `olmsync run` may end with an error
// (failed says so): the test reads the error, its cleanup does not fail on it.
func startRunExpecting(t *testing.T, failed bool, args ...string) (*syncBuffer, <-chan error) {
	t.Helper()
	out := &syncBuffer{}
	cmd := newRootCommand()
	cmd.SetOut(out)
	cmd.SetErr(out)
	// No webhook receiver on the default port and no writes to the user's git cache,
	// unless the test says otherwise (a later flag wins).
	cmd.SetArgs(append([]string{"run", "--webhook-bind-address=0", "--git-cache", t.TempDir()}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !failed {
				t.Errorf("olmsync run: %v\n%s", err, out)
			}
		case <-time.After(30 * time.Second):
			t.Error("olmsync run did not stop")
		}
	})
	return out, done
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // a loopback URL the test built
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestRunInstallsAnOperator runs `olmsync run` against a real API server, as a user would
// against a cluster without OLM: it installs the CRDs, becomes ready, installs an operator
// from a ConfigMap catalog through a Subscription, and serves OLM's metrics.
func TestRunInstallsAnOperator(t *testing.T) {
	env := testenv.Get(t)
	metricsAddr, probeAddr := testenv.FreeAddr(t), testenv.FreeAddr(t)
	out, done := startRun(t, "--kubeconfig", kubeconfigFile(t, env), "--install-crds",
		"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", probeAddr,
		"--leader-election-namespace", "kube-system")
	olmtest.Eventually(t, "readyz", func() error {
		select {
		case err := <-done:
			return fmt.Errorf("olmsync run stopped: %w\n%s", err, out)
		default:
		}
		code, body, err := get("http://" + probeAddr + "/readyz")
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("%d %s %w", code, body, err)
		}
		return nil
	})
	if !strings.Contains(out.String(), "the embedded OLM runs") {
		t.Errorf("output does not say the embedded OLM runs:\n%s", out)
	}

	ns := olmtest.NewNamespace(t, env, "run")
	olmtest.OwnGroup(t, env, ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go olmtest.KeepDeploymentsAvailable(ctx, env.Client, ns)
	olmtest.ConfigMapCatalog(t, env, ns, "cat", olmtest.Bundle{Package: "widget", Version: "1.0.0"})
	olmtest.Create(t, env, &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"},
		Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: ns, Package: "widget", Channel: "stable"},
	})
	olmtest.Eventually(t, "widget installed", func() error {
		csv := &v1alpha1.ClusterServiceVersion{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget.v1.0.0"}, csv); err != nil {
			return err
		}
		if csv.Status.Phase != v1alpha1.CSVPhaseSucceeded {
			return fmt.Errorf("phase %s", csv.Status.Phase)
		}
		return nil
	})
	olmtest.Eventually(t, "OLM's metrics", func() error {
		_, body, err := get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return err
		}
		for _, want := range []string{"csv_count ", "csv_succeeded{", `name="widget.v1.0.0"`, "subscription_count ", "subscription_sync_total{", "install_plan_count ", "catalog_source_count "} {
			if !strings.Contains(body, want) {
				return fmt.Errorf("no %q in the metrics", want)
			}
		}
		return nil
	})
}

// TestRunLeavesOLMToTheCluster: with another OLM's Deployment in the cluster, --olm=auto
// starts without the embedded controllers and says what it found; a Subscription stays
// untouched.
func TestRunLeavesOLMToTheCluster(t *testing.T) {
	env := testenv.Get(t)
	ns := olmtest.NewNamespace(t, env, "other-olm")
	replicas := int32(1)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "olm-operator"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "olm-operator"}},
			Template: corev1PodTemplate("olm-operator"),
		},
	}
	olmtest.Create(t, env, dep)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), dep) })
	probeAddr := testenv.FreeAddr(t)
	out, _ := startRun(t, "--kubeconfig", kubeconfigFile(t, env), "--olm", "auto", "--metrics-bind-address", "0",
		"--health-probe-bind-address", probeAddr, "--leader-elect=false")
	olmtest.Eventually(t, "readyz", func() error {
		code, _, err := get("http://" + probeAddr + "/readyz")
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("%d %w", code, err)
		}
		return nil
	})
	want := fmt.Sprintf("the embedded OLM does not run (--olm=auto; found: [Deployment %s/olm-operator])", ns)
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	sub := &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"},
		Spec:       v1alpha1.SubscriptionSpec{CatalogSource: "cat", CatalogSourceNamespace: ns, Package: "widget"},
	}
	olmtest.Create(t, env, sub)
	time.Sleep(2 * time.Second) // what an embedded Subscription controller would need to write a status
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(sub), sub); err != nil {
		t.Fatal(err)
	}
	if len(sub.Status.Conditions) != 0 || sub.Status.State != "" {
		t.Errorf("the Subscription was reconciled beside another OLM: %+v", sub.Status)
	}
}

func TestRunRejectsABadMode(t *testing.T) {
	_, err := run(t, "run", "--olm", "sometimes")
	if err == nil || !strings.Contains(err.Error(), `--olm="sometimes": want embedded, external or auto`) {
		t.Fatalf("err %v", err)
	}
	if exitCode(err) != exitUsage {
		t.Errorf("exit %d", exitCode(err))
	}
}

func TestRunRejectsBadOLMWorkers(t *testing.T) {
	_, err := run(t, "run", "--olm-concurrent", "0")
	if err == nil || !strings.Contains(err.Error(), "--olm-concurrent=0: want 1 or more") {
		t.Fatalf("err %v, want --olm-concurrent=0 refused", err)
	}
}

func TestRunRejectsABadJitter(t *testing.T) {
	_, err := run(t, "run", "--interval-jitter-percentage", "100")
	if err == nil || !strings.Contains(err.Error(), "jitter percentage") {
		t.Fatalf("err %v, want the jitter percentage refused", err)
	}
}

func TestRunRejectsABadLogLevel(t *testing.T) {
	_, err := run(t, "run", "--zap-log-level", "chatty")
	if err == nil || !strings.Contains(err.Error(), "zap-log-level") {
		t.Fatalf("err %v, want --zap-log-level refused", err)
	}
}

func corev1PodTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: app, Image: "example.com/" + app}}},
	}
}

// TestLeaderElectionDefault: outside a cluster `olmsync run` takes no lease unless asked
// (--leader-elect); in a cluster it does unless told not to.
func TestLeaderElectionDefault(t *testing.T) {
	for _, tc := range []struct {
		asked, value, inCluster, want bool
	}{
		{false, false, false, false},
		{false, false, true, true},
		{true, true, false, true},
		{true, false, true, false},
	} {
		if got := leaderElection(tc.asked, tc.value, tc.inCluster); got != tc.want {
			t.Errorf("leaderElection(asked %t, --leader-elect=%t, in cluster %t) = %t, want %t", tc.asked, tc.value, tc.inCluster, got, tc.want)
		}
	}
}

// TestRunTakesALeaseOnlyWhenAsked runs `olmsync run` outside a cluster twice: without
// --leader-elect it becomes ready with no Lease in the lease namespace; with it, it holds
// the Lease.
func TestRunTakesALeaseOnlyWhenAsked(t *testing.T) {
	env := testenv.Get(t)
	leaseNS := olmtest.NewNamespace(t, env, "lease")
	lease := func() *coordinationv1.Lease {
		l := &coordinationv1.Lease{}
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: leaseNS, Name: olm.LeaderElectionID}, l)
		if err != nil {
			return nil
		}
		return l
	}
	for _, asked := range []bool{false, true} {
		t.Run(fmt.Sprintf("leader-elect=%t", asked), func(t *testing.T) {
			probeAddr := testenv.FreeAddr(t)
			args := []string{"--kubeconfig", kubeconfigFile(t, env), "--metrics-bind-address=0",
				"--health-probe-bind-address", probeAddr, "--leader-election-namespace", leaseNS}
			if asked {
				args = append(args, "--leader-elect")
			}
			out, done := startRun(t, args...)
			olmtest.Eventually(t, "readyz, and the lease as asked", func() error {
				select {
				case err := <-done:
					return fmt.Errorf("olmsync run stopped: %w\n%s", err, out)
				default:
				}
				if code, body, err := get("http://" + probeAddr + "/readyz"); err != nil || code != http.StatusOK {
					return fmt.Errorf("%d %s %w", code, body, err)
				}
				if l := lease(); asked && (l == nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "") {
					return fmt.Errorf("no lease held: %+v", l)
				}
				return nil
			})
			if l := lease(); !asked && l != nil {
				t.Errorf("a Lease was taken without --leader-elect: %+v", l.Spec)
			}
		})
	}
}

// TestLeaseTimings: lease timings under which a leader could be deposed while it still
// acts are refused before anything starts.
func TestLeaseTimings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		t       reconcile.Timings
		wantErr string
	}{
		{"defaults", reconcile.DefaultTimings, ""},
		{"a test's", reconcile.Timings{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}, ""},
		{"zero", reconcile.Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second}, "must be positive"},
		{"renew deadline not below the lease", reconcile.Timings{LeaseDuration: 10 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second}, "must be less than --leader-election-lease-duration"},
		{"retry too close to the deadline", reconcile.Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 5 * time.Second, RetryPeriod: 5 * time.Second}, "more than 1.2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validTimings(tc.t)
			if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("validTimings(%+v) = %v, want an error with %q", tc.t, err, tc.wantErr)
			}
		})
	}
}

// TestRunDefaultsToPolicyGlobalCatalogNamespace: run's --global-catalog-namespace defaults to
// the namespace check holds CatalogSources to (TestGlobalCatalogNamespaceIsOneSetting).
func TestRunDefaultsToPolicyGlobalCatalogNamespace(t *testing.T) {
	if runDefault := newRunCommand().Flags().Lookup("global-catalog-namespace").DefValue; runDefault != policy.DefaultMarketplaceNamespace {
		t.Errorf("run defaults to %q, policy to %q: want one", runDefault, policy.DefaultMarketplaceNamespace)
	}
}
