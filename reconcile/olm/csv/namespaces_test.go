package csv_test

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm/csv"
)

// TestOwnNamespaceSyncListsNoNamespaces: a CSV whose group targets only its own namespace can
// have no copies and no RBAC copied into other namespaces, so its syncs — from no phase to
// installing — list none of the cluster's Namespaces (each list copied every Namespace the
// cache holds, on every sync of every CSV).
func TestOwnNamespaceSyncListsNoNamespaces(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := newNamespace(t, env, "own-namespace")
	obj := createGadget(t, env, ns)
	obj.Spec.MinKubeVersion = "" // met: the syncs go on to the install
	if err := env.Client.Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
	var namespaceLists atomic.Int32
	direct, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	counting := interceptor.NewClient(direct, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
			if _, ok := l.(*corev1.NamespaceList); ok {
				namespaceLists.Add(1)
			}
			return c.List(ctx, l, opts...)
		},
	})
	r := &csv.Reconciler{Client: counting, APIReader: env.Client, Discovery: discovery.NewDiscoveryClientForConfigOrDie(env.Config)}
	var phases []v1alpha1.ClusterServiceVersionPhase
	for range 4 {
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		phases = append(phases, getCSV(t, env, ns, obj.Name).Status.Phase)
	}
	if last := phases[len(phases)-1]; last != v1alpha1.CSVPhaseInstalling && last != v1alpha1.CSVPhaseSucceeded {
		t.Fatalf("phases %v: the syncs did not reach the install, where copies and group RBAC are kept", phases)
	}
	if n := namespaceLists.Load(); n != 0 {
		t.Errorf("%d lists of Namespaces in the syncs of an OwnNamespace group's CSV (phases %v), want none", n, phases)
	}
}
