package csv

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// TestNeighbours: an event of a CSV syncs the CSV it replaces when the cache holds that one,
// and the CSVs that replace it; a replaced CSV that was never installed (an operator
// installed at its channel head) is not synced for nothing.
func TestNeighbours(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	csv := func(name, replaces string) *v1alpha1.ClusterServiceVersion {
		return &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: v1alpha1.ClusterServiceVersionSpec{Replaces: replaces}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&v1alpha1.ClusterServiceVersion{}, indexReplaces, replaces).
		WithObjects(csv("a.v1", ""), csv("a.v2", "a.v1"), csv("a.v3", "a.v2"), csv("b.v9", "b.v8")).Build()
	r := &Reconciler{Client: c}
	tests := map[string]struct {
		csv  *v1alpha1.ClusterServiceVersion
		want []reconcile.Request
	}{
		"in the middle of a chain": {csv("a.v2", "a.v1"), []reconcile.Request{request("ns", "a.v1"), request("ns", "a.v3")}},
		"the first of a chain":     {csv("a.v1", ""), []reconcile.Request{request("ns", "a.v2")}},
		"replacing what never was": {csv("b.v9", "b.v8"), nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := r.neighbours(context.Background(), tc.csv)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b reconcile.Request) bool { return a.Name < b.Name })); diff != "" {
				t.Errorf("neighbours (-want +got):\n%s", diff)
			}
		})
	}
}
