package csv

import (
	"context"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/phase"
)

// TestCRDEvents: an update of a CRD that changed only installed-alongside annotations queues
// the CSVs of the namespaces those annotations name; any other change — or another annotation
// — queues every CSV that owns the CRD, as a create or delete does; an update that changed
// nothing queues none.
func TestCRDEvents(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	const crdName = "things.example.com"
	owner := func(ns string) *v1alpha1.ClusterServiceVersion {
		c := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "thing.v1"}}
		c.Spec.CustomResourceDefinitions.Owned = []v1alpha1.CRDDescription{{Name: crdName, Version: "v1", Kind: "Thing"}}
		return c
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&v1alpha1.ClusterServiceVersion{}, indexCRDs, crdNames).
		WithObjects(owner("a"), owner("b"), owner("c")).Build()
	r := &Reconciler{Client: c}
	alongside := func(ns string) string { return phase.InstalledAlongsidePrefix + ns }
	crd := func(edit func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
		o := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
			Name: crdName, Generation: 1, Labels: map[string]string{"olm.managed": "true"},
			Annotations: map[string]string{alongside("a"): "a/thing.v1", "other": "x"},
		}}
		o.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
		if edit != nil {
			edit(o)
		}
		return o
	}
	before := crd(nil)
	tests := map[string]struct {
		after *apiextensionsv1.CustomResourceDefinition
		want  []string // namespaces whose CSV is queued
	}{
		"a namespace's annotation added":                 {crd(func(o *apiextensionsv1.CustomResourceDefinition) { o.Annotations[alongside("b")] = "b/thing.v1" }), []string{"b"}},
		"a namespace's annotation now names another CSV": {crd(func(o *apiextensionsv1.CustomResourceDefinition) { o.Annotations[alongside("a")] = "a/thing.v2" }), []string{"a"}},
		"a namespace's annotation removed":               {crd(func(o *apiextensionsv1.CustomResourceDefinition) { delete(o.Annotations, alongside("a")) }), []string{"a"}},
		"nothing changed":                                {crd(nil), nil},
		"another annotation changed":                     {crd(func(o *apiextensionsv1.CustomResourceDefinition) { o.Annotations["other"] = "y" }), []string{"a", "b", "c"}},
		"the spec changed":                               {crd(func(o *apiextensionsv1.CustomResourceDefinition) { o.Generation = 2 }), []string{"a", "b", "c"}},
		"a label changed":                                {crd(func(o *apiextensionsv1.CustomResourceDefinition) { o.Labels["x"] = "y" }), []string{"a", "b", "c"}},
		"the status changed, with an annotation": {crd(func(o *apiextensionsv1.CustomResourceDefinition) {
			o.Status.Conditions[0].Status = apiextensionsv1.ConditionFalse
			o.Annotations[alongside("b")] = "b/thing.v1"
		}), []string{"a", "b", "c"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			r.crdEvents().Update(context.Background(), event.UpdateEvent{ObjectOld: before, ObjectNew: tc.after}, q)
			var got []string
			for q.Len() > 0 {
				req, _ := q.Get()
				got = append(got, req.Namespace)
				q.Done(req)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("queued the CSVs of %v, want %v", got, tc.want)
			}
		})
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	r.crdEvents().Create(context.Background(), event.CreateEvent{Object: before}, q)
	if q.Len() != 3 {
		t.Errorf("a created CRD queued %d CSVs, want the 3 that own it", q.Len())
	}
}
