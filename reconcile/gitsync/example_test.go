package gitsync_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/policy"
)

// TestSyncExampleLocal syncs examples/local — the repository the README's quick start
// runs — from a git server into the API server with the embedded OLM, a stand-in for the
// kubelet keeping its Deployments available: the operator installs from the ConfigMap
// catalog at the channel head, the Greeting is applied once OLM has installed its CRD, and
// every app ends Synced and Healthy with the Sync Ready. It keeps the example honest.
func TestSyncExampleLocal(t *testing.T) {
	env := testenv.Get(t)
	files := map[string]string{}
	root := filepath.Join("..", "..", "examples", "local")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	up := gittest.NewUpstream(t, files)
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go olmtest.KeepDeploymentsAvailable(ctx, env.Client, "hello")
	startManager(t, env, managerOptions{globalCatalogNamespace: policy.DefaultMarketplaceNamespace}) // olmsync run's default

	ns := uniqueNS("example")
	createNamespace(t, env, ns)
	s := newSync(t, env, ns, "local", srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		// The example's namespaces have fixed names and envtest never finishes deleting a
		// namespace: deleting the Sync at the end must not prune them.
		spec.Prune = false
	})
	defer func() {
		if t.Failed() {
			for _, k := range []struct{ kind, ns, name string }{{"CatalogSource", policy.DefaultMarketplaceNamespace, "hello-catalog"}, {"Subscription", "hello", "hello-operator"}} {
				o := object(t, env, schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: k.kind}, k.ns, k.name)
				if o != nil {
					t.Logf("%s: %v", k.kind, o.Object["status"])
				}
			}
		}
	}()
	head := up.Head(t)
	var got *olmsyncv1alpha1.Sync
	olmtest.Eventually(t, "Sync Ready at HEAD with every app Synced and Healthy", func() error {
		got = appliedAt(t, env, s, head)
		for _, app := range got.Status.Apps {
			if app.Sync != olmsyncv1alpha1.SyncStatusSynced || app.Health != olmsyncv1alpha1.HealthHealthy {
				return fmt.Errorf("app %s is %s and %s: %s", app.Name, app.Sync, app.Health, app.Message)
			}
		}
		return nil
	})
	if len(got.Status.Apps) != 2 {
		t.Errorf("apps %+v, want cluster-scope and hello", got.Status.Apps)
	}
	csv := object(t, env, schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersion"}, "hello", "hello-operator.v0.2.0")
	if csv == nil {
		t.Fatal("no CSV hello-operator.v0.2.0 in namespace hello")
	}
	if phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase"); phase != "Succeeded" {
		t.Errorf("CSV hello-operator.v0.2.0 is %q, want Succeeded", phase)
	}
	if object(t, env, schema.GroupVersionKind{Group: "hello.olmsync.dev", Version: "v1", Kind: "Greeting"}, "hello", "world") == nil {
		t.Error("the Greeting was not applied after its CRD")
	}
}
