package installplan_test

import (
	"context"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm/installplan"
)

// TestCRDStepUpdatesTheCRDItChecked: a plan whose CRD is already in the cluster (another
// namespace's operator installed it) checks the update once before any step (OLM's check:
// the CRD read, its custom resources listed) and the CRD step then updates the CRD it
// checked: no create it knows would fail, no second read and list. When the CRD changes
// between the check and the update (another plan, the API server's status of it), the
// update is refused as a conflict; the step reads and checks the CRD again and updates that,
// keeping what the other writer put there, instead of failing the execution for a retry.
func TestCRDStepUpdatesTheCRDItChecked(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		meanwhile bool // the CRD changes between the check and the update
		reads     int  // reads of the CRD from the API server
	}{
		{name: "unchanged", reads: 1},
		{name: "changed-meanwhile", meanwhile: true, reads: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := olmtest.NewNamespace(t, env, "crd-step")
			group := ns + ".example.com"
			olmtest.OwnGroupTargeted(t, env, ns)
			crd := existingWidgetCRD(t, env, group)

			var creates, updates atomic.Int32
			watching, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			writes := interceptor.NewClient(watching, interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if _, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
						creates.Add(1)
					}
					return c.Create(ctx, obj, opts...)
				},
				Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					if _, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok && updates.Add(1) == 1 && tc.meanwhile {
						other := &apiextensionsv1.CustomResourceDefinition{}
						if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), other); err != nil {
							return err
						}
						other.Annotations["example.com/meanwhile"] = "yes"
						if err := env.Client.Update(ctx, other); err != nil {
							return err
						}
					}
					return c.Update(ctx, obj, opts...)
				},
			})
			reads := &olmtest.APIReads{Reader: env.Client}
			plan := installingWidget(t, env, ns, "install", group)
			r := &installplan.Reconciler{Client: writes, APIReader: reads, Mapper: env.Client.RESTMapper()}
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(plan)}); err != nil {
				t.Fatalf("reconcile: %v", err)
			}

			got := &v1alpha1.InstallPlan{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(plan), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != v1alpha1.InstallPlanPhaseComplete || got.Status.Plan[0].Status != v1alpha1.StepStatusPresent {
				t.Errorf("phase %s (%q), CRD step %s; want Complete after one reconcile, the CRD Present", got.Status.Phase, got.Status.Message, got.Status.Plan[0].Status)
			}
			if n := creates.Load(); n != 0 {
				t.Errorf("%d creates of the CRD the check found, want none", n)
			}
			if n := reads.Of(&apiextensionsv1.CustomResourceDefinition{}); n != tc.reads {
				t.Errorf("the CRD was read %d times, want %d", n, tc.reads)
			}
			if n := reads.Of(&unstructured.UnstructuredList{}); n != tc.reads {
				t.Errorf("its custom resources were listed %d times, want %d (one served version per check)", n, tc.reads)
			}
			after := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), after); err != nil {
				t.Fatal(err)
			}
			key, value := installplan.InstalledAlongside(ns, "widget.v1.0.0")
			want := map[string]string{"example.com/other": "kept", key: value}
			if tc.meanwhile {
				want["example.com/meanwhile"] = "yes"
			}
			for k, v := range want {
				if after.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q (all: %v)", k, after.Annotations[k], v, after.Annotations)
				}
			}
		})
	}
}

// existingWidgetCRD creates widgets.<group> as another namespace's plan would have, with an
// annotation of its own, and waits until its custom resources can be listed.
func existingWidgetCRD(t *testing.T, env *testenv.Env, group string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, err := decodeCRD(widgetCRD(group, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	crd.Annotations = map[string]string{"example.com/other": "kept"}
	establishedCRD(t, env, crd)
	olmtest.Eventually(t, "widgets served", func() error {
		var l unstructured.UnstructuredList
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "WidgetList"})
		return env.Client.List(context.Background(), &l)
	})
	return crd
}
