package installplan_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
)

// TestCRDCheckListsAFreshCRDWithoutWaiting: the update check of a CRD another namespace's plan
// created moments ago lists its custom resources (as OLM does) while the API server's watch
// cache of them is still starting: the first request for a new CRD's resources creates it.
// A list without a limit is then refused, 429 with Retry-After of at least a second
// (KEP-4568, on by default since Kubernetes 1.31), and client-go sleeps and asks again — a
// second of the worker's time per CRD (48 of the 50 CRDs in BenchmarkSteadyState). A list
// in pages (a limit) is served from etcd meanwhile: the check lists so, and is answered at
// once.
func TestCRDCheckListsAFreshCRDWithoutWaiting(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "crd-fresh")
	group := ns + ".example.com"
	olmtest.OwnGroupTargeted(t, env, ns)
	crd, err := decodeCRD(widgetCRD(group, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	establishedCRD(t, env, crd)

	var refused, lists atomic.Int32
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return olmtest.RoundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.Method == http.MethodGet && r.URL.Path == "/apis/"+group+"/v1/widgets" {
				lists.Add(1)
				if resp.StatusCode == http.StatusTooManyRequests {
					refused.Add(1)
				}
			}
			return resp, err
		})
	})
	reader, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	reads := &olmtest.APIReads{Reader: reader}
	plan := installingWidget(t, env, ns, "install", group)
	r := &installplan.Reconciler{Client: env.Client, APIReader: reads, Mapper: env.Client.RESTMapper()}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(plan)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	got := &v1alpha1.InstallPlan{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(plan), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1alpha1.InstallPlanPhaseComplete || got.Status.Plan[0].Status != v1alpha1.StepStatusPresent {
		t.Errorf("phase %s (%q), CRD step %s; want Complete, the CRD Present", got.Status.Phase, got.Status.Message, got.Status.Plan[0].Status)
	}
	if n := reads.Of(&unstructured.UnstructuredList{}); n != 1 {
		t.Errorf("the custom resources were listed %d times, want once (OLM's check)", n)
	}
	if n := refused.Load(); n != 0 {
		t.Errorf("%d of %d lists of the new CRD's custom resources were refused 429 (its watch cache starting) and retried after a second; want none", n, lists.Load())
	}
}

// TestCRDCheckReadsEveryPage: the update check lists the custom resources in pages and checks
// all of them: with two to a page, the one of five that the plan's stricter schema refuses
// comes on the last page, and the plan is refused with OLM's message, the CRD unchanged.
func TestCRDCheckReadsEveryPage(t *testing.T) {
	defer installplan.SetCustomResourcePage(2)()
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "crd-pages")
	group := ns + ".example.com"
	olmtest.OwnGroupTargeted(t, env, ns)
	existingWidgetCRD(t, env, group)
	for i := 1; i <= 5; i++ {
		size := any(i)
		if i == 5 {
			size = "large" // refused by the plan's schema: size is an integer there
		}
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Widget",
			"metadata": map[string]any{"namespace": ns, "name": fmt.Sprintf("w%d", i)},
			"spec":     map[string]any{"size": size},
		}}
		olmtest.Create(t, env, w)
	}
	plan := installingWidget(t, env, ns, "install", group)
	strict := strings.Replace(widgetCRD(group, "v1"), "x-kubernetes-preserve-unknown-fields: true",
		"properties: {spec: {type: object, properties: {size: {type: integer}}}}", 1)
	plan.Status.Plan[0].Resource.Manifest = manifestJSON(t, strict)
	if err := env.Client.Status().Update(ctx, plan); err != nil {
		t.Fatal(err)
	}
	reads := &olmtest.APIReads{Reader: env.Client}
	r := &installplan.Reconciler{Client: env.Client, APIReader: reads, Mapper: env.Client.RESTMapper()}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(plan)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if n := reads.Of(&unstructured.UnstructuredList{}); n != 3 {
		t.Errorf("%d lists of five custom resources two to a page, want 3", n)
	}
	got := &v1alpha1.InstallPlan{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(plan), got); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("error validating existing CRs against new CRD's schema for %q", "widgets."+group)
	if !strings.Contains(got.Status.Message, want) || !strings.Contains(got.Status.Message, "w5") {
		t.Errorf("phase %s, message %q; want it refused for w5: %s", got.Status.Phase, got.Status.Message, want)
	}
	for _, s := range got.Status.Plan {
		if s.Status == v1alpha1.StepStatusCreated || s.Status == v1alpha1.StepStatusPresent {
			t.Errorf("step %s %s is %s: a refused plan writes nothing", s.Resource.Kind, s.Resource.Name, s.Status)
		}
	}
}
