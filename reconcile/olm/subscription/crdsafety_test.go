package subscription_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

// TestRefusedCRDUpdateWritesNothingAndRecovers: widget 1.1.0 brings a CRD whose schema the
// stored Widget refuses. The plan fails before any step is written — OLM's message, no
// widget.v1.1.0 CSV, the Subscription still on 1.0.0 — and once the Widget is deleted, a new
// resolution makes a new plan that installs 1.1.0.
func TestRefusedCRDUpdateWritesNothingAndRecovers(t *testing.T) {
	env, ns, _ := flowWith(t, olm.Options{InstallPlanRetryTimeout: 3 * time.Second, FailedPlanRetryInterval: 2 * time.Second})
	ctx := context.Background()
	group := ns + ".example.com"
	loose := olmtest.API{Group: group, Version: "v1", Kind: "Widget"}
	strict := loose
	strict.Schema = `{type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}`
	v100 := olmtest.Bundle{Package: "widget", Version: "1.0.0", Owns: []olmtest.API{loose}}
	olmtest.ConfigMapCatalog(t, env, ns, "cat", v100)
	subscribe(t, env, ns, "widget", "widget")
	waitInstalled(t, env, ns, "widget", "widget.v1.0.0")

	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": ns},
		"spec":     map[string]any{"size": "big"},
	}}
	olmtest.Create(t, env, w)

	v110 := olmtest.Bundle{Package: "widget", Version: "1.1.0", Replaces: v100.Name(), Owns: []olmtest.API{strict}}
	olmtest.ConfigMapCatalog(t, env, ns, "cat", v100, v110)

	// OLM's words (catalog/step.go:151 around crdupgrade's validation message).
	want := fmt.Sprintf(`error validating existing CRs against new CRD's schema for "widgets.%s": error validating %s/v1, Kind=Widget "%s/w1": updated validation is too restrictive: `, group, group, ns)
	var failed *v1alpha1.InstallPlan
	olmtest.Eventually(t, "the plan for widget.v1.1.0 Failed with OLM's message", func() error {
		for _, ip := range plansOf(t, env.Client, ns) {
			if slices.Contains(ip.Spec.ClusterServiceVersionNames, "widget.v1.1.0") && ip.Status.Phase == v1alpha1.InstallPlanPhaseFailed {
				failed = &ip
				return nil
			}
		}
		return fmt.Errorf("plans %v", plannedCSVs(t, env, ns))
	})
	if !strings.HasPrefix(failed.Status.Message, want) {
		t.Errorf("message of the failed plan %q, want it to start with %q", failed.Status.Message, want)
	}
	for _, s := range failed.Status.Plan {
		if s.Status == v1alpha1.StepStatusCreated || s.Status == v1alpha1.StepStatusPresent {
			t.Errorf("step %s %s was written: %s", s.Resource.Kind, s.Resource.Name, s.Status)
		}
	}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget.v1.1.0"}, &v1alpha1.ClusterServiceVersion{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("csv widget.v1.1.0 exists (or %v): the refused plan wrote it", err)
	}
	s := &v1alpha1.Subscription{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widget"}, s); err != nil {
		t.Fatal(err)
	}
	if s.Status.InstalledCSV != "widget.v1.0.0" {
		t.Errorf("subscription reports %q installed, want widget.v1.0.0", s.Status.InstalledCSV)
	}
	if c := subscription.Condition(&s.Status, v1alpha1.SubscriptionInstallPlanFailed); c != nil && !strings.HasPrefix(c.Message, want) {
		t.Errorf("InstallPlanFailed message %q", c.Message)
	}

	if err := env.Client.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitInstalled(t, env, ns, "widget", "widget.v1.1.0")
	if n := len(plannedCSVs(t, env, ns)); n < 3 {
		t.Errorf("%d plans, want the first install, the refused plan and a new one", n)
	}
}
