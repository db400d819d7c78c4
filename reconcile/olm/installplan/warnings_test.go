package installplan_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// TestWarningsMessage holds the literals of OLM's AppliedWithWarnings Event
// (pkg/controller/operators/catalog/operator.go:2495 and :2497).
func TestWarningsMessage(t *testing.T) {
	step := &v1alpha1.Step{Resource: v1alpha1.StepResource{Kind: "ServiceMonitor", Name: "sm"}}
	warnings := []string{"monitoring.coreos.com/v1 ServiceMonitor is deprecated", "second"}
	if got, want := installplan.WarningsMessage(step, warnings),
		`2 warning(s) generated during operator installation (ServiceMonitor "sm"): monitoring.coreos.com/v1 ServiceMonitor is deprecated, second`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	step.Resolving = "sm.v1.0.0"
	if got, want := installplan.WarningsMessage(step, warnings[:1]),
		`1 warning(s) generated during installation of operator "sm.v1.0.0" (ServiceMonitor "sm"): monitoring.coreos.com/v1 ServiceMonitor is deprecated`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestInstallPlanWarnings: a step whose write the API server answers with a warning — a
// ServiceMonitor of a CRD version marked deprecated — counts once in
// installplan_warnings_total (OLM's pkg/metrics/metrics.go: once per resource that drew
// warnings) and makes OLM's AppliedWithWarnings Event on the plan, the step as field path.
func TestInstallPlanWarnings(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	const warning = "monitoring.coreos.com/v1 ServiceMonitor is deprecated; use v2"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "servicemonitors.monitoring.coreos.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "monitoring.coreos.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "servicemonitors", Singular: "servicemonitor", Kind: "ServiceMonitor", ListKind: "ServiceMonitorList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true, Deprecated: true, DeprecationWarning: ptrTo(warning),
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTo(true),
				}},
			}},
		},
	}
	if err := env.Client.Create(ctx, crd); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	olmtest.Eventually(t, "servicemonitors served", func() error {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitorList"})
		return env.Client.List(ctx, l)
	})
	olmtest.StartManager(t, env, olm.Options{})
	ns := olmtest.NewNamespace(t, env, "warnings")
	olmtest.OwnGroup(t, env, ns)
	// The step's object is owned by its CSV, which must exist.
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := decodeInto(widgetCSV(ns+".example.com", "1.0.0"), csv); err != nil {
		t.Fatal(err)
	}
	csv.Namespace = ns
	olmtest.Create(t, env, csv)

	before := testutil.ToFloat64(metrics.InstallPlanWarnings)
	plan := installPlan(ns, "with-warning", v1alpha1.ApprovalAutomatic, csv.Name)
	plan.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.SubscriptionKind,
		Name: "sm", UID: "00000000-0000-0000-0000-000000000002"}}
	olmtest.Create(t, env, plan)
	plan.Status = v1alpha1.InstallPlanStatus{
		Phase: v1alpha1.InstallPlanPhaseInstalling, CatalogSources: []string{},
		Plan: []v1alpha1.Step{{Resolving: csv.Name, Status: v1alpha1.StepStatusUnknown,
			Resource: v1alpha1.StepResource{Kind: "ServiceMonitor", Name: "sm", Group: "monitoring.coreos.com", Version: "v1",
				Manifest: `{"apiVersion":"monitoring.coreos.com/v1","kind":"ServiceMonitor","metadata":{"name":"sm"},"spec":{"endpoints":[{"port":"metrics"}]}}`}}},
	}
	if err := env.Client.Status().Update(ctx, plan); err != nil {
		t.Fatal(err)
	}
	waitPlanPhase(t, env, ns, "with-warning", v1alpha1.InstallPlanPhaseComplete)
	if got := testutil.ToFloat64(metrics.InstallPlanWarnings) - before; got != 1 {
		t.Errorf("installplan_warnings_total went up by %v, want 1", got)
	}
	// Name, type and help as OLM's pkg/metrics/metrics.go:204-209 registers them.
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		if f.GetName() == "installplan_warnings_total" {
			found = true
			if f.GetType() != dto.MetricType_COUNTER || f.GetHelp() != "monotonic count of resources that generated warnings when applied as part of an InstallPlan (for example, due to deprecation)" {
				t.Errorf("installplan_warnings_total: %v %q", f.GetType(), f.GetHelp())
			}
		}
	}
	if !found {
		t.Error("installplan_warnings_total is not registered with the manager's metrics")
	}
	want := fmt.Sprintf(`1 warning(s) generated during installation of operator %q (ServiceMonitor "sm"): %s`, csv.Name, warning)
	olmtest.Eventually(t, "an AppliedWithWarnings event", func() error {
		var events eventsv1.EventList
		if err := env.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == "AppliedWithWarnings" {
				if e.Note != want || e.Type != "Warning" || e.Regarding.Name != "with-warning" || e.Regarding.FieldPath != "status.plan[0]" {
					return fmt.Errorf("event %s %s on %+v: %q, want %q", e.Type, e.Reason, e.Regarding, e.Note, want)
				}
				return nil
			}
		}
		return fmt.Errorf("none among %d events", len(events.Items))
	})
}

func ptrTo[T any](v T) *T { return &v }
