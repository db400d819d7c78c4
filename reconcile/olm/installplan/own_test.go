package installplan_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
)

// TestStepsReadTheirCSVOnce: a plan's ServiceAccount, Role and RoleBinding steps are each
// owned by the plan's CSV. When the plan created the CSV, the steps take its UID from the
// create's answer and read nothing; when the CSV was there already (another plan of the
// namespace, an earlier attempt), it is read from the API server once for all of them, not
// once per step. Either way each object carries the CSV's owner reference, with its UID.
func TestStepsReadTheirCSVOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		csvExists bool
		wantReads int
	}{
		{name: "created by the plan", wantReads: 0},
		{name: "there already", csvExists: true, wantReads: 1},
	} {
		t.Run(tc.name, func(t *testing.T) { stepsReadTheirCSV(t, tc.csvExists, tc.wantReads) })
	}
}

func stepsReadTheirCSV(t *testing.T, csvExists bool, wantReads int) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "own-once")
	olmtest.OwnGroupTargeted(t, env, ns) // no OperatorGroup controller runs here
	const csvName = "widget.v1.0.0"
	step := func(kind, group, name, y string) v1alpha1.Step {
		return planStep(t, csvName, kind, group, "v1", name, y)
	}
	csvStep := planStep(t, csvName, v1alpha1.ClusterServiceVersionKind, v1alpha1.GroupName, "v1alpha1", csvName, widgetCSV("widgets.example.com", "v1"))
	if csvExists {
		existing := &v1alpha1.ClusterServiceVersion{}
		if err := decodeInto(widgetCSV("widgets.example.com", "v1"), existing); err != nil {
			t.Fatal(err)
		}
		existing.Namespace = ns
		olmtest.Create(t, env, existing)
	}
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
	if n := reads.Of(&v1alpha1.ClusterServiceVersion{}); n != wantReads {
		t.Errorf("%d reads of the CSV from the API server for three steps it owns, want %d", n, wantReads)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: csvName}, csv); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget-operator"}, obj); err != nil {
			t.Fatal(err)
		}
		refs := obj.GetOwnerReferences()
		if len(refs) != 1 || refs[0].Name != csvName || refs[0].UID != csv.UID {
			t.Errorf("%T: owner references %+v, want the CSV's (UID %s)", obj, refs, csv.UID)
		}
	}
}
