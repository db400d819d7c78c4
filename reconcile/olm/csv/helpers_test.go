package csv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/api/operators"
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/groups"
	"github.com/olmsync/olmsync/reconcile/olm"
)

// waitTimeout bounds how long a test waits for the controllers to reach a state. It is not a
// performance assertion: the machine is shared and slow, so it is generous.
const waitTimeout = 60 * time.Second

// leaseNamespace holds the Lease the test managers elect their leader with.
const leaseNamespace = "olmsync-system"

// OLMSYNC_TEST_LOG=1 shows the controllers' logs.
func init() {
	logger := logr.Discard()
	if os.Getenv("OLMSYNC_TEST_LOG") != "" {
		logger = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
	}
	log.SetLogger(logger)
	klog.SetLogger(logger)
}

// manager is a running controller-runtime manager with the embedded OLM's controllers.
type manager struct {
	ctrl.Manager
	stop context.CancelFunc
	done chan error
	// err is what Start returned once the manager stopped.
	err error
}

// startManager starts a manager with the CSV and OperatorGroup controllers, leader election on
// and the narrowed cache, waits until it leads, and stops it when the test ends (or earlier,
// through shutdown).
func startManager(t *testing.T, env *testenv.Env, opts olm.Options) *manager {
	t.Helper()
	m := newManager(t, env, opts)
	select {
	case <-m.Elected():
	case <-time.After(waitTimeout):
		t.Fatalf("manager was not elected leader within %s", waitTimeout)
	}
	return m
}

// startManagerUnelected starts a manager without waiting for it to lead.
func startManagerUnelected(t *testing.T, env *testenv.Env) *manager {
	t.Helper()
	return newManager(t, env, olm.Options{})
}

func newManager(t *testing.T, env *testenv.Env, opts olm.Options) *manager {
	t.Helper()
	ensureNamespace(t, env, leaseNamespace)
	lease, renew, retry := 4*time.Second, 3*time.Second, 500*time.Millisecond
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                        env.Scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              olm.LeaderElectionID,
		LeaderElectionNamespace:       leaseNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		Cache:                         cache.Options{ByObject: olm.CacheByObject()},
		Controller:                    olm.ControllerConfig(),
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	if err := olm.SetupWithManager(mgr, opts); err != nil {
		t.Fatalf("set up controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &manager{Manager: mgr, stop: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		m.shutdown()
		olmtest.CheckStopped(t, "manager", m.err)
	})
	return m
}

// shutdown stops the manager and waits for it; it may be called more than once.
func (m *manager) shutdown() {
	m.stop()
	if m.done != nil {
		m.err = <-m.done
		m.done = nil
	}
}

func ensureNamespace(t *testing.T, env *testenv.Env, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// newNamespace creates a namespace of its own for a test.
func newNamespace(t *testing.T, env *testenv.Env, prefix string, labels ...string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: pairs(labels...)}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

func pairs(kv ...string) map[string]string {
	if len(kv) == 0 {
		return nil
	}
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// bundleDir is the manifests folder of a real bundle in ../shared.
func bundleDir(t *testing.T, pkg, version string) string {
	t.Helper()
	return shareddata.Path(t, filepath.Join("data/catalogs/community-operators-bundles/operators", pkg, version, "manifests"))
}

// loadCSV decodes the real CSV of a bundle, placed in namespace.
func loadCSV(t *testing.T, dir, namespace string) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.clusterserviceversion.yaml"))
	if err != nil || len(files) != 1 {
		t.Fatalf("want one CSV in %s, found %v (%v)", dir, files, err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := operators.Decode(raw)
	if err != nil {
		t.Fatalf("decode %s: %v", files[0], err)
	}
	csv, ok := decoded.Object.(*v1alpha1.ClusterServiceVersion)
	if !ok {
		t.Fatalf("%s holds a %T", files[0], decoded.Object)
	}
	csv.Namespace = namespace
	csv.ResourceVersion = ""
	return csv
}

// installCRDs creates the CRDs of a bundle (once per test binary) and waits for them to be
// Established.
func installCRDs(t *testing.T, env *testenv.Env, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "kind: CustomResourceDefinition") {
			continue
		}
		crd := readCRD(t, f, raw)
		if err := env.Client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create crd %s: %v", crd.Name, err)
		}
		eventually(t, "crd "+crd.Name+" established", func() error {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
				return err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return errors.New("not established")
		})
	}
}

// operatorGroup creates a group; targets nil makes it global.
func operatorGroup(t *testing.T, env *testenv.Env, namespace, name string, targets ...string) *operatorsv1.OperatorGroup {
	t.Helper()
	og := &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: targets},
	}
	create(t, env, og)
	return og
}

// create creates an object. An OperatorGroup is deleted again when the test ends: the tests
// share one API server, and a group left behind that lists an API in olm.providedAPIs would
// intersect every later test's global group and fail its CSV with
// InterOperatorGroupOwnerConflict, as OLM would. (Namespaces cannot be deleted instead:
// envtest runs no namespace controller, so a deleted namespace keeps its objects.)
func create(t *testing.T, env *testenv.Env, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	if og, ok := obj.(*operatorsv1.OperatorGroup); ok {
		key := client.ObjectKeyFromObject(og)
		t.Cleanup(func() {
			gone := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			if err := env.Client.Delete(context.Background(), gone); client.IgnoreNotFound(err) != nil {
				t.Errorf("delete operatorgroup %s: %v", key, err)
			}
		})
	}
}

// eventually polls check until it returns nil, failing the test with its last error after
// waitTimeout.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var err error
	for {
		if err = check(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// getCSV reads a CSV from the API server.
func getCSV(t *testing.T, env *testenv.Env, namespace, name string) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, csv); err != nil {
		t.Fatalf("get csv %s/%s: %v", namespace, name, err)
	}
	return csv
}

// waitPhase waits until the CSV has the phase and reason.
func waitPhase(t *testing.T, env *testenv.Env, namespace, name string, phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	var csv *v1alpha1.ClusterServiceVersion
	eventually(t, fmt.Sprintf("csv %s/%s %s/%s", namespace, name, phase, reason), func() error {
		csv = &v1alpha1.ClusterServiceVersion{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, csv); err != nil {
			return err
		}
		if csv.Status.Phase != phase || csv.Status.Reason != reason {
			return fmt.Errorf("csv is %s/%s: %s", csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
		}
		return nil
	})
	return csv
}

// markAvailable stands in for the missing kubelet and deployment controller: it writes the
// status of a Deployment that rolled out and is available.
func markAvailable(t *testing.T, env *testenv.Env, namespace, name string) {
	t.Helper()
	ctx := context.Background()
	eventually(t, "deployment "+namespace+"/"+name+" marked available", func() error {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return err
		}
		replicas := ptr.Deref(d.Spec.Replicas, 1)
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation,
			Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
			Conditions: []appsv1.DeploymentCondition{{
				Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
				Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability.",
			}},
		}
		return env.Client.Status().Update(ctx, d)
	})
}

// deploymentNames are the names of a CSV's strategy deployments.
func deploymentNames(csv *v1alpha1.ClusterServiceVersion) []string {
	var out []string
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		out = append(out, d.Name)
	}
	return out
}

// installAndSucceed creates the CSV and walks it to Succeeded, marking its deployments
// available once they exist.
func installAndSucceed(t *testing.T, env *testenv.Env, csv *v1alpha1.ClusterServiceVersion) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	create(t, env, csv)
	waitPhase(t, env, csv.Namespace, csv.Name, v1alpha1.CSVPhaseInstalling, v1alpha1.CSVReasonWaiting)
	for _, name := range deploymentNames(csv) {
		markAvailable(t, env, csv.Namespace, name)
	}
	return waitPhase(t, env, csv.Namespace, csv.Name, v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful)
}

// listCopies returns the copies of a CSV in other namespaces.
func listCopies(t *testing.T, env *testenv.Env, namespace, name string) []v1alpha1.ClusterServiceVersion {
	t.Helper()
	var list v1alpha1.ClusterServiceVersionList
	if err := env.Client.List(context.Background(), &list, client.MatchingLabels{v1alpha1.CopiedLabelKey: namespace}); err != nil {
		t.Fatal(err)
	}
	var out []v1alpha1.ClusterServiceVersion
	for _, c := range list.Items {
		if c.Name == name && groups.IsCopied(&c) {
			out = append(out, c)
		}
	}
	return out
}

// deleteAndWait deletes an object and waits until it is gone.
func deleteAndWait(t *testing.T, env *testenv.Env, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		t.Fatalf("delete %s: %v", obj.GetName(), err)
	}
	eventually(t, "deletion of "+obj.GetName(), func() error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		return errors.New("still there")
	})
}

// abnormalSeries returns the phase/reason of every csv_abnormal series of a CSV.
func abnormalSeries(t *testing.T, namespace, name string) []string {
	t.Helper()
	var out []string
	for _, l := range csvSeries(t, "csv_abnormal", namespace, name) {
		out = append(out, l["phase"]+"/"+l["reason"])
	}
	return out
}

// csvSeries returns the labels of every series of a CSV metric for one CSV.
func csvSeries(t *testing.T, family, namespace, name string) []map[string]string {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["namespace"] == namespace && l["name"] == name {
				out = append(out, l)
			}
		}
	}
	return out
}

// setTargets sets a group's spec.targetNamespaces.
func setTargets(t *testing.T, env *testenv.Env, namespace, name string, targets ...string) {
	t.Helper()
	ctx := context.Background()
	eventually(t, "targets of "+namespace+"/"+name+" set", func() error {
		og := &operatorsv1.OperatorGroup{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, og); err != nil {
			return err
		}
		og.Spec.TargetNamespaces = targets
		return env.Client.Update(ctx, og)
	})
}

// waitGroupAPIs waits until a group's olm.providedAPIs is want.
func waitGroupAPIs(t *testing.T, env *testenv.Env, namespace, name, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("olm.providedAPIs of %s/%s = %q", namespace, name, want), func() error {
		og := &operatorsv1.OperatorGroup{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, og); err != nil {
			return err
		}
		if got := og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]; got != want {
			return fmt.Errorf("it is %q", got)
		}
		return nil
	})
}

// noDeployments says whether the namespace holds no deployment.
func noDeployments(env *testenv.Env, namespace string) error {
	var list appsv1.DeploymentList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
		return err
	}
	if len(list.Items) != 0 {
		return fmt.Errorf("%d deployments in %s", len(list.Items), namespace)
	}
	return nil
}

// hasCondition says whether the CSV's history holds an entry of the phase and message.
func hasCondition(csv *v1alpha1.ClusterServiceVersion, phase v1alpha1.ClusterServiceVersionPhase, message string) error {
	for _, c := range csv.Status.Conditions {
		if c.Phase == phase && c.Message == message {
			return nil
		}
	}
	return fmt.Errorf("no %s condition %q in %+v", phase, message, csv.Status.Conditions)
}

// readCRD reads a bundle's CRD. An apiextensions.k8s.io/v1beta1 CRD (old bundles have them;
// Kubernetes no longer serves that version) becomes a minimal v1 CRD of the same group, names,
// scope and versions that keeps any field.
func readCRD(t *testing.T, file string, raw []byte) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if !strings.Contains(string(raw), "apiextensions.k8s.io/v1beta1") {
		if err := yaml.Unmarshal(raw, crd); err != nil {
			t.Fatalf("read crd %s: %v", file, err)
		}
		return crd
	}
	var old struct {
		Metadata struct{ Name string }
		Spec     struct {
			Group    string
			Scope    apiextensionsv1.ResourceScope
			Names    apiextensionsv1.CustomResourceDefinitionNames
			Version  string
			Versions []struct {
				Name    string
				Served  bool
				Storage bool
			}
		}
	}
	if err := yaml.Unmarshal(raw, &old); err != nil {
		t.Fatalf("read v1beta1 crd %s: %v", file, err)
	}
	crd.Name = old.Metadata.Name
	crd.Spec.Group, crd.Spec.Scope, crd.Spec.Names = old.Spec.Group, old.Spec.Scope, old.Spec.Names
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptr.To(true),
	}}
	if len(old.Spec.Versions) == 0 {
		crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{{Name: old.Spec.Version, Served: true, Storage: true, Schema: schema}}
	}
	for _, v := range old.Spec.Versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v.Name, Served: v.Served, Storage: v.Storage, Schema: schema})
	}
	return crd
}
