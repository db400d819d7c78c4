package installplan_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/catalog"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m))
}

const leaseNamespace = "olmsync-system"

// started runs a manager with every embedded OLM controller (leader election on) until stop.
type started struct {
	stop context.CancelFunc
	done chan error
}

func (s *started) shutdown(t *testing.T) {
	t.Helper()
	if s.done == nil {
		return
	}
	s.stop()
	if err := <-s.done; err != nil {
		t.Errorf("manager stopped with: %v", err)
	}
	s.done = nil
}

func startManager(t *testing.T, env *testenv.Env, opts olm.Options) *started {
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
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	if opts.RetryInterval == 0 {
		opts.RetryInterval = time.Second
	}
	if err := olm.SetupWithManager(mgr, opts); err != nil {
		t.Fatalf("set up controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &started{stop: cancel, done: make(chan error, 1)}
	go func() { s.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { s.shutdown(t) })
	select {
	case <-mgr.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("the manager did not become leader")
	}
	return s
}

var nsCounter atomic.Int64

func newNamespace(t *testing.T, env *testenv.Env, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, nsCounter.Add(1))
	ensureNamespace(t, env, name)
	return name
}

func ensureNamespace(t *testing.T, env *testenv.Env, name string) {
	t.Helper()
	err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, env *testenv.Env, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	if og, ok := obj.(*operatorsv1.OperatorGroup); ok {
		// Groups left behind would intersect later tests' groups (the tests share a server).
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), og) })
	}
}

// eventually polls check until it returns nil, failing the test with its last error.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = check(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}

// ownGroup makes an OperatorGroup of ns targeting ns.
func ownGroup(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	create(t, env, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}},
	})
}

// The ConfigMap catalog of the tests: package "widget", channel alpha, widget.v1.0.0 owning
// widgets.<group>, with a deployment and a namespaced permission. group keeps tests apart.
func widgetCRD(group string, versions ...string) string {
	var vs strings.Builder
	for i, v := range versions {
		fmt.Fprintf(&vs, `
  - name: %s
    served: true
    storage: %t
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true`, v, i == len(versions)-1)
	}
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:%[2]s
`, group, vs.String())
}

func widgetCSV(group, version string) string {
	return fmt.Sprintf(`apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: widget.v1.0.0
spec:
  displayName: Widget
  version: 1.0.0
  installModes:
  - {type: OwnNamespace, supported: true}
  - {type: SingleNamespace, supported: true}
  - {type: MultiNamespace, supported: false}
  - {type: AllNamespaces, supported: false}
  customresourcedefinitions:
    owned:
    - {name: widgets.%[1]s, version: %[2]s, kind: Widget}
  install:
    strategy: deployment
    spec:
      permissions:
      - serviceAccountName: widget-operator
        rules:
        - {apiGroups: [%[1]s], resources: [widgets], verbs: ["*"]}
      deployments:
      - name: widget-operator
        spec:
          replicas: 1
          selector: {matchLabels: {app: widget-operator}}
          template:
            metadata: {labels: {app: widget-operator}}
            spec:
              serviceAccountName: widget-operator
              containers:
              - {name: operator, image: example.com/widget-operator:1.0.0}
`, group, version)
}

const widgetPackage = `packageName: widget
defaultChannel: alpha
channels:
- {name: alpha, currentCSV: widget.v1.0.0}
`

// yamlList writes manifests as the YAML list a ConfigMap catalog key holds.
func yamlList(t *testing.T, manifests ...string) string {
	t.Helper()
	var items []any
	for _, m := range manifests {
		var v any
		if err := yaml.Unmarshal([]byte(m), &v); err != nil {
			t.Fatal(err)
		}
		items = append(items, v)
	}
	data, err := yaml.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// configMapCatalog creates the widget catalog as a ConfigMap and a CatalogSource reading it.
func configMapCatalog(t *testing.T, env *testenv.Env, ns, group string) *v1alpha1.CatalogSource {
	t.Helper()
	create(t, env, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets"},
		Data: map[string]string{
			catalog.ConfigMapKeyCRDs:     yamlList(t, widgetCRD(group, "v1")),
			catalog.ConfigMapKeyCSVs:     yamlList(t, widgetCSV(group, "v1")),
			catalog.ConfigMapKeyPackages: yamlList(t, widgetPackage),
		},
	})
	cs := &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets"},
		Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeConfigmap, ConfigMap: "widgets"},
	}
	create(t, env, cs)
	return waitConnection(t, env, ns, "widgets", v1alpha1.ConnectionStateReady)
}

func waitConnection(t *testing.T, env *testenv.Env, ns, name, state string) *v1alpha1.CatalogSource {
	t.Helper()
	cs := &v1alpha1.CatalogSource{}
	eventually(t, fmt.Sprintf("catalogsource %s/%s %s", ns, name, state), func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cs); err != nil {
			return err
		}
		if s := cs.Status.GRPCConnectionState; s == nil || s.LastObservedState != state {
			return fmt.Errorf("status %+v", cs.Status)
		}
		return nil
	})
	return cs
}

func installPlan(ns, name string, approval v1alpha1.Approval, csvs ...string) *v1alpha1.InstallPlan {
	return &v1alpha1.InstallPlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.InstallPlanSpec{
			ClusterServiceVersionNames: csvs, Approval: approval, Approved: approval == v1alpha1.ApprovalAutomatic,
		},
	}
}

func waitPlanPhase(t *testing.T, env *testenv.Env, ns, name string, want v1alpha1.InstallPlanPhase) *v1alpha1.InstallPlan {
	t.Helper()
	ip := &v1alpha1.InstallPlan{}
	eventually(t, fmt.Sprintf("installplan %s/%s %s", ns, name, want), func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ip); err != nil {
			return err
		}
		if ip.Status.Phase != want {
			return fmt.Errorf("phase %q, message %q, conditions %+v", ip.Status.Phase, ip.Status.Message, ip.Status.Conditions)
		}
		return nil
	})
	return ip
}

func waitCSVPhase(t *testing.T, env *testenv.Env, ns, name string, want v1alpha1.ClusterServiceVersionPhase) {
	t.Helper()
	eventually(t, fmt.Sprintf("csv %s/%s %s", ns, name, want), func() error {
		csv := &v1alpha1.ClusterServiceVersion{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, csv); err != nil {
			return err
		}
		if csv.Status.Phase != want {
			return fmt.Errorf("phase %q (%s: %s)", csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
		}
		return nil
	})
}

// markAvailable plays the kubelet and deployment controller envtest lacks: the Deployment's
// replicas are up and it is Available.
func markAvailable(t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	eventually(t, "deployment "+name+" available", func() error {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return err
		}
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}},
		}
		return env.Client.Status().Update(context.Background(), d)
	})
}

// fbcImage is a catalog image holding the FBC files under /configs.
func fbcImage(t *testing.T, fbc string) v1.Image {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "configs/catalog.json", Mode: 0o644, Size: int64(len(fbc)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(fbc)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Labels: map[string]string{catalog.ConfigsLabel: "/configs"}})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func push(t *testing.T, ref string, img v1.Image) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

func decodeCRD(manifest string) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	return crd, yaml.Unmarshal([]byte(manifest), crd)
}

func decodeInto(manifest string, obj any) error {
	return yaml.Unmarshal([]byte(manifest), obj)
}
