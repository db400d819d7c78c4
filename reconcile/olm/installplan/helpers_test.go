package installplan_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apihelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m))
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

// configMapCatalog creates the widget catalog as a ConfigMap and a CatalogSource reading it.
func configMapCatalog(t *testing.T, env *testenv.Env, ns, group string) *v1alpha1.CatalogSource {
	t.Helper()
	olmtest.Create(t, env, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets"},
		Data: map[string]string{
			catalog.ConfigMapKeyCRDs:     olmtest.YAMLList(t, widgetCRD(group, "v1")),
			catalog.ConfigMapKeyCSVs:     olmtest.YAMLList(t, widgetCSV(group, "v1")),
			catalog.ConfigMapKeyPackages: olmtest.YAMLList(t, widgetPackage),
		},
	})
	cs := &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets"},
		Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeConfigmap, ConfigMap: "widgets"},
	}
	olmtest.Create(t, env, cs)
	return waitConnection(t, env, ns, "widgets", v1alpha1.ConnectionStateReady)
}

func waitConnection(t *testing.T, env *testenv.Env, ns, name, state string) *v1alpha1.CatalogSource {
	t.Helper()
	cs := &v1alpha1.CatalogSource{}
	olmtest.Eventually(t, fmt.Sprintf("catalogsource %s/%s %s", ns, name, state), func() error {
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
	olmtest.Eventually(t, fmt.Sprintf("installplan %s/%s %s", ns, name, want), func() error {
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
	olmtest.Eventually(t, fmt.Sprintf("csv %s/%s %s", ns, name, want), func() error {
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
	olmtest.Eventually(t, "deployment "+name+" available", func() error {
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

func decodeCRD(manifest string) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	return crd, yaml.Unmarshal([]byte(manifest), crd)
}

func decodeInto(manifest string, obj any) error {
	return yaml.Unmarshal([]byte(manifest), obj)
}

// installingWidget creates an Automatic InstallPlan of widget.v1.0.0 in ns, Installing with
// the two steps of its bundle not yet executed: the CRD widgets.<group> and the CSV.
func installingWidget(t *testing.T, env *testenv.Env, ns, name, group string) *v1alpha1.InstallPlan {
	t.Helper()
	const csvName = "widget.v1.0.0"
	plan := installPlan(ns, name, v1alpha1.ApprovalAutomatic, csvName)
	olmtest.Create(t, env, plan)
	plan.Status = v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseInstalling, CatalogSources: []string{}, Plan: []v1alpha1.Step{
		planStep(t, csvName, "CustomResourceDefinition", "apiextensions.k8s.io", "v1", "widgets."+group, widgetCRD(group, "v1")),
		planStep(t, csvName, v1alpha1.ClusterServiceVersionKind, v1alpha1.GroupName, "v1alpha1", csvName, widgetCSV(group, "v1")),
	}}
	if err := env.Client.Status().Update(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	return plan
}

// planStep is a step of csvName's bundle not yet executed, its manifest the YAML given as JSON
// (as a plan's steps carry it).
func planStep(t *testing.T, csvName, kind, group, version, name, manifest string) v1alpha1.Step {
	t.Helper()
	return v1alpha1.Step{Resolving: csvName, Status: v1alpha1.StepStatusUnknown, Resource: v1alpha1.StepResource{
		Kind: kind, Name: name, Group: group, Version: version, Manifest: manifestJSON(t, manifest)}}
}

// manifestJSON is a YAML manifest as JSON.
func manifestJSON(t *testing.T, manifest string) string {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

// establishedCRD creates crd and waits until the API server says it is Established — not
// until its resources are served: the first request for them starts their watch cache.
func establishedCRD(t *testing.T, env *testenv.Env, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	olmtest.Create(t, env, crd)
	olmtest.Eventually(t, "the CRD established", func() error {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(crd), got); err != nil {
			return err
		}
		if !apihelpers.IsCRDConditionTrue(got, apiextensionsv1.Established) {
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		}
		return nil
	})
}
