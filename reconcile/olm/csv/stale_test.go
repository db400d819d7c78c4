package csv_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm/csv"
)

// gadgetCSV is an operator whose only requirement is its minKubeVersion: no CRDs, APIs or
// permissions.
const gadgetCSV = `
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: gadget.v1.0.0
spec:
  displayName: Gadget
  version: 1.0.0
  minKubeVersion: 99.0.0
  installModes:
  - {type: OwnNamespace, supported: true}
  - {type: SingleNamespace, supported: true}
  - {type: MultiNamespace, supported: false}
  - {type: AllNamespaces, supported: false}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: gadget-operator
        spec:
          replicas: 1
          selector: {matchLabels: {app: gadget-operator}}
          template:
            metadata: {labels: {app: gadget-operator}}
            spec:
              containers:
              - {name: operator, image: "example.com/gadget-operator:1.0.0"}
`

// TestRequirementsClearedAfterAStaleRead: a Pending CSV whose minKubeVersion the server does
// not meet lists that requirement in status.requirementStatus; its spec is then edited to
// require nothing, and the sync the edit wakes reads a copy that holds the edit but not the
// requirement write before it (they raced). The sync must still empty requirementStatus:
// no later phase rewrites it.
func TestRequirementsClearedAfterAStaleRead(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := newNamespace(t, env, "stale-read")
	og := operatorGroup(t, env, ns, "og", ns)
	// No OperatorGroup controller runs here: write the targets it would.
	now := metav1.Now()
	og.Status.Namespaces, og.Status.LastUpdated = []string{ns}, &now
	if err := env.Client.Status().Update(ctx, og); err != nil {
		t.Fatal(err)
	}
	obj := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict([]byte(gadgetCSV), obj); err != nil {
		t.Fatal(err)
	}
	obj.Namespace = ns
	create(t, env, obj)
	key := client.ObjectKeyFromObject(obj)
	lagging := &olmtest.StaleCache{Client: env.Client}
	r := &csv.Reconciler{
		Client:    lagging,
		APIReader: env.Client,
		Discovery: discovery.NewDiscoveryClientForConfigOrDie(env.Config),
	}
	syncAndGet := func() *v1alpha1.ClusterServiceVersion {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		return getCSV(t, env, ns, obj.Name)
	}

	pending := syncAndGet()
	if pending.Status.Phase != v1alpha1.CSVPhasePending || len(pending.Status.RequirementStatus) > 0 {
		t.Fatalf("first sync: phase %q, requirements %+v; want Pending, none checked yet", pending.Status.Phase, pending.Status.RequirementStatus)
	}
	if got := syncAndGet(); got.Status.Reason != v1alpha1.CSVReasonRequirementsNotMet || len(got.Status.RequirementStatus) != 1 {
		t.Fatalf("second sync: reason %q, requirements %+v; want %s with the minKubeVersion", got.Status.Reason, got.Status.RequirementStatus, v1alpha1.CSVReasonRequirementsNotMet)
	}

	edited := getCSV(t, env, ns, obj.Name)
	edited.Spec.MinKubeVersion = ""
	if err := env.Client.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	// The cache: the edit, over the status the second sync started from.
	stale := edited.DeepCopy()
	stale.Status = pending.Status
	lagging.Stale = stale

	got := syncAndGet()
	if len(got.Status.RequirementStatus) > 0 {
		t.Errorf("requirements %+v after the spec stopped requiring anything, want none", got.Status.RequirementStatus)
	}
	if got.Status.Phase != v1alpha1.CSVPhaseInstallReady {
		t.Errorf("phase %q, want %s", got.Status.Phase, v1alpha1.CSVPhaseInstallReady)
	}
}
