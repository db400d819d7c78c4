package testenv_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/olmsync/olmsync/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// TestControlPlaneCPU: the CPU time read for this control plane's kube-apiserver and etcd
// grows by what 300 writes cost them, and a second control plane's, idle meanwhile, grows by
// less: each is read from its own processes.
func TestControlPlaneCPU(t *testing.T) {
	env, bare := testenv.Get(t), testenv.GetBare(t)
	api0, etcd0 := controlPlaneCPU(t, env)
	bare0, _ := controlPlaneCPU(t, bare)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cpu-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	api1, etcd1 := controlPlaneCPU(t, env)
	bare1, _ := controlPlaneCPU(t, bare)
	t.Logf("300 creates: kube-apiserver %s, etcd %s; the idle one's kube-apiserver %s", api1-api0, etcd1-etcd0, bare1-bare0)
	if api1 <= api0 || etcd1 <= etcd0 {
		t.Errorf("CPU did not grow with 300 writes: kube-apiserver %s → %s, etcd %s → %s", api0, api1, etcd0, etcd1)
	}
	if bare1-bare0 >= api1-api0 {
		t.Errorf("the idle control plane's API server used %s meanwhile, the busy one's %s: the same process read twice?", bare1-bare0, api1-api0)
	}
}

func controlPlaneCPU(t *testing.T, env *testenv.Env) (apiserver, etcd time.Duration) {
	t.Helper()
	apiserver, etcd, err := env.ControlPlaneCPU()
	if err != nil {
		t.Fatal(err)
	}
	return apiserver, etcd
}
