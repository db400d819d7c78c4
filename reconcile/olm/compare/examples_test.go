package compare_test

import (
	"path/filepath"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/check/preview"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/sources"
)

// globalCatalogNamespace is the embedded OLM's global catalog namespace in this test, and
// the one the examples' olmsync.yaml files mean (policy.marketplaceNamespace's default).
const globalCatalogNamespace = "openshift-marketplace"

// example is a repository of examples/ whose clusters hold Subscriptions, with the
// catalogs `check --catalog` would be given for it.
type example struct {
	dir      string
	catalogs []preview.CatalogSpec
	// catalogSources are the CatalogSources the cluster has besides the repository's.
	catalogSources []v1alpha1.CatalogSource
}

// examples are the repositories of examples/ compared. examples/local keeps its catalog
// (a ConfigMap and its CatalogSource) in the repository, so the controllers get it from
// the rendered objects. Not here yet: gitops and gitops-violations. Their catalog
// (gitops/catalog) lists every bundle by an image at quay.io/example only, so the
// controllers would have nothing to unpack offline (the preview judges such bundles from
// their olm.csv.metadata); comparing them needs bundle images made from that metadata and
// pushed to olmtest.ServeRegistry, and, since both repositories (and clusters alpha and
// beta) declare the same namespaces and global OperatorGroups, a namespace prefix or a
// manager of their own each.
var examples = []example{{
	dir: "local",
	catalogs: []preview.CatalogSpec{{Name: "hello-catalog", Namespace: globalCatalogNamespace,
		Source: filepath.Join("..", "..", "..", "examples", "local", "cluster-scope", "catalog.yaml")}},
}}

// olmKinds are the kinds of a rendered example the comparison applies: what OLM reads.
// The rest (custom resources of the operators' CRDs, RBAC) is not OLM's business.
var olmKinds = []string{"Namespace", "ConfigMap", "CatalogSource", "OperatorGroup", "Subscription"}

// runExample previews one example as `check` renders it, applies its OLM objects to the
// API server and compares.
func runExample(t *testing.T, env *testenv.Env, kubeVersion string, ex example) {
	tree, err := sources.OpenWorkTree(filepath.Join("..", "..", "..", "examples", ex.dir), sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	state := &preview.ClusterState{KubeVersion: kubeVersion, CatalogSourcesListed: true, CatalogSources: ex.catalogSources}
	for _, c := range ex.catalogs {
		state.CatalogSources = append(state.CatalogSources, v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name}})
	}
	want, res := previewTree(t, tree, state, preview.Options{Catalogs: ex.catalogs})
	if len(want.Subscriptions) == 0 {
		t.Fatalf("example %s previews no Subscription", ex.dir)
	}
	var namespaces []string
	subs := map[string]bool{}
	var objects []*unstructured.Unstructured
	for _, in := range res.Inputs {
		for _, app := range in.Apps {
			for _, o := range app.Objects {
				u := &unstructured.Unstructured{Object: o.Object}
				if !slices.Contains(olmKinds, u.GetKind()) {
					continue
				}
				u = u.DeepCopy()
				if u.GetKind() == "Namespace" {
					namespaces = append(namespaces, u.GetName())
				} else {
					u.SetNamespace(o.Namespace)
				}
				if u.GetKind() == "Subscription" {
					subs[u.GetNamespace()+"/"+u.GetName()] = true
				}
				objects = append(objects, u)
			}
		}
	}
	// Namespaces first, Subscriptions last, as a sync applies them.
	slices.SortStableFunc(objects, func(a, b *unstructured.Unstructured) int {
		return slices.Index(olmKinds, a.GetKind()) - slices.Index(olmKinds, b.GetKind())
	})
	for _, u := range objects {
		if u.GetKind() == "Namespace" {
			olmtest.EnsureNamespace(t, env, u.GetName())
			continue
		}
		olmtest.Create(t, env, u)
	}
	converge(t, "example "+ex.dir, want, func() outcome { return observeNamespaces(t, env, namespaces, subs, want) }, ex.dir)
}
