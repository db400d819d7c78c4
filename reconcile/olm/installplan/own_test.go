package installplan_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
)

// TestStepsReadTheirCSVOnce: a plan's ServiceAccount, Role and RoleBinding steps are each
// owned by the CSV the plan created; the CSV is read from the API server once for all of
// them, not once per step, and each object carries the CSV's owner reference.
func TestStepsReadTheirCSVOnce(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "own-once")
	olmtest.OwnGroupTargeted(t, env, ns) // no OperatorGroup controller runs here
	manifest := func(y string) string {
		t.Helper()
		j, err := yaml.YAMLToJSON([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return string(j)
	}
	const csvName = "widget.v1.0.0"
	step := func(kind, group, name, y string) v1alpha1.Step {
		return v1alpha1.Step{Resolving: csvName, Status: v1alpha1.StepStatusUnknown, Resource: v1alpha1.StepResource{
			Kind: kind, Name: name, Group: group, Version: "v1", Manifest: manifest(y)}}
	}
	csvStep := step(v1alpha1.ClusterServiceVersionKind, v1alpha1.GroupName, csvName, widgetCSV("widgets.example.com", "v1"))
	csvStep.Resource.Version = "v1alpha1"
	plan := installPlan(ns, "install-own", v1alpha1.ApprovalAutomatic, csvName)
	olmtest.Create(t, env, plan)
	plan.Status = v1alpha1.InstallPlanStatus{Phase: v1alpha1.InstallPlanPhaseInstalling, CatalogSources: []string{}, Plan: []v1alpha1.Step{
		csvStep,
		step("ServiceAccount", "", "widget-operator", "{apiVersion: v1, kind: ServiceAccount, metadata: {name: widget-operator}}"),
		step("Role", "rbac.authorization.k8s.io", "widget-operator", "{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: widget-operator}, rules: [{apiGroups: [widgets.example.com], resources: [widgets], verbs: [get]}]}"),
		step("RoleBinding", "rbac.authorization.k8s.io", "widget-operator", "{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: widget-operator}, "+
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: widget-operator}, subjects: [{kind: ServiceAccount, name: widget-operator}]}"),
	}}
	if err := env.Client.Status().Update(ctx, plan); err != nil {
		t.Fatal(err)
	}
	reads := &olmtest.APIReads{Reader: env.Client}
	r := &installplan.Reconciler{Client: env.Client, APIReader: reads, Mapper: env.Client.RESTMapper()}
	res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(plan)})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if res.RequeueAfter != 0 {
		t.Logf("the reconcile asks to be run again after %s", res.RequeueAfter)
	}
	got := &v1alpha1.InstallPlan{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(plan), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1alpha1.InstallPlanPhaseComplete {
		t.Fatalf("phase %s, message %q, steps %+v; want Complete", got.Status.Phase, got.Status.Message, got.Status.Plan)
	}
	if n := reads.Of(&v1alpha1.ClusterServiceVersion{}); n != 1 {
		t.Errorf("%d reads of the CSV from the API server for three steps it owns, want 1", n)
	}
	sa := &corev1.ServiceAccount{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget-operator"}, sa); err != nil {
		t.Fatal(err)
	}
	if len(sa.OwnerReferences) != 1 || sa.OwnerReferences[0].Name != csvName || sa.OwnerReferences[0].UID == "" {
		t.Errorf("owner references %+v, want the CSV's", sa.OwnerReferences)
	}
}
