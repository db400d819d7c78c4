package dashboard

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/olmsync/olmsync/internal/kube"
)

// TestCSVsOf: a workload's change is told as the CSVs the graph draws it below — its own
// for a Deployment OLM made, each CSV with a Deployment in the namespace (once) for a
// ReplicaSet or a Pod — and not at all where OLM runs nothing.
func TestCSVsOf(t *testing.T) {
	deployment := func(ns, name string, labels map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	owned := func(kind, csv, ns string) map[string]string {
		return map[string]string{"olm.owner": csv, "olm.owner.kind": kind, "olm.owner.namespace": ns}
	}
	csv := func(ns, name string) Change { return Change{Kind: "ClusterServiceVersion", Namespace: ns, Name: name} }
	r := fake.NewClientBuilder().WithScheme(kube.Scheme()).WithObjects(
		deployment("operators", "a-manager", owned("ClusterServiceVersion", "a.v1", "operators")),
		deployment("operators", "a-webhook", owned("ClusterServiceVersion", "a.v1", "operators")),
		deployment("operators", "b-manager", owned("ClusterServiceVersion", "b.v2", "operators")),
		deployment("operators", "mine", map[string]string{"app": "mine"}),
		deployment("apps", "web", map[string]string{"app": "web"}),
	).Build()
	tests := []struct {
		name string
		obj  client.Object
		want []Change
	}{
		{"a Deployment OLM made: its CSV", deployment("operators", "a-manager", owned("ClusterServiceVersion", "a.v1", "operators")), []Change{csv("operators", "a.v1")}},
		{"a Deployment nobody's: nothing", deployment("operators", "mine", map[string]string{"app": "mine"}), nil},
		{"a Deployment an OperatorGroup owns: nothing", deployment("operators", "x", owned("OperatorGroup", "og", "operators")), nil},
		{"a Deployment without its owner's name: nothing", deployment("operators", "x", map[string]string{"olm.owner.kind": "ClusterServiceVersion"}), nil},
		{"a Pod beside OLM's Deployments: each CSV once", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "a-manager-1"}},
			[]Change{csv("operators", "a.v1"), csv("operators", "b.v2")}},
		{"a ReplicaSet beside them: the same", &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "mine-1"}},
			[]Change{csv("operators", "a.v1"), csv("operators", "b.v2")}},
		{"a Pod where OLM runs nothing: nothing", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web-1"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := csvsOf(context.Background(), r, tt.obj)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("csvsOf (-want +got):\n%s", diff)
			}
		})
	}
}
