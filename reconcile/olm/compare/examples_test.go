package compare_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/check/preview"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/olm"
	"github.com/olmsync/olmsync/report"
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
	// imageCatalog is a catalog folder (under examples/) that lists every bundle by an
	// image at quay.io/example/ only, given as the catalog community-operators: its copy
	// with the bundle images pushed to a registry on loopback (pushImageCatalog) is what
	// the preview reads, and the same catalog as an image is what a CatalogSource of
	// sourceType grpc, community-operators in the global catalog namespace, serves the
	// controllers.
	imageCatalog string
	// own gives each cluster of the example a control plane and embedded OLM of its own:
	// the example declares namespaces and global OperatorGroups that another example, or
	// another of its clusters, declares too, and OLM's global state (the global catalog
	// namespace, the global OperatorGroups) must not reach from one into the other.
	own bool
}

// imageCatalogName is the CatalogSource an example's imageCatalog stands for, as
// examples/README.md gives it: `--catalog community-operators=catalog`.
const imageCatalogName = "community-operators"

// examples are the repositories of examples/ compared, each cluster of each that has
// Subscriptions. examples/local keeps its catalog (a ConfigMap and its CatalogSource) in
// the repository, so the controllers get it from the rendered objects; it shares the
// control plane of the generated cases. gitops and gitops-violations both read gitops's
// catalog, whose bundles are images only.
var examples = []example{{
	dir: "local",
	catalogs: []preview.CatalogSpec{{Name: "hello-catalog", Namespace: globalCatalogNamespace,
		Source: filepath.Join("..", "..", "..", "examples", "local", "cluster-scope", "catalog.yaml")}},
}, {
	dir:          "gitops",
	imageCatalog: filepath.Join("gitops", "catalog"),
	own:          true,
}, {
	dir:          "gitops-violations",
	imageCatalog: filepath.Join("gitops", "catalog"),
	own:          true,
}}

// olmKinds are the kinds of a rendered example the comparison applies: what OLM reads.
// The rest (custom resources of the operators' CRDs, RBAC) is not OLM's business.
var olmKinds = []string{"Namespace", "ConfigMap", "CatalogSource", "OperatorGroup", "Subscription"}

// runExample previews one example as `check` renders it and compares each of its clusters
// that has Subscriptions with the controllers (runCluster).
func runExample(t *testing.T, env *testenv.Env, kubeVersion string, ex example) {
	examplesDir := filepath.Join("..", "..", "..", "examples")
	tree, err := sources.OpenWorkTree(filepath.Join(examplesDir, ex.dir), sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// What the cluster has outside Git: the CatalogSources given, and the OperatorGroups
	// olmsync.yaml says it has (policy.operatorGroups; by default OpenShift's global group),
	// which the preview takes from the config only when it has no state.
	rendered, err := check.Run(context.Background(), tree, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	state := &preview.ClusterState{KubeVersion: kubeVersion, CatalogSourcesListed: true, CatalogSources: ex.catalogSources,
		OperatorGroups: configGroups(t, rendered)}
	reg := olmtest.ServeRegistry(t)
	images := reg.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()})
	catalogs := slices.Clip(ex.catalogs)
	var img *imageCatalog
	if ex.imageCatalog != "" {
		ic := pushImageCatalog(t, reg, filepath.Join(examplesDir, ex.imageCatalog), "example/"+imageCatalogName+"-index:latest")
		img = &ic
		catalogs = append(catalogs, preview.CatalogSpec{Name: imageCatalogName, Namespace: globalCatalogNamespace, Source: ic.Dir})
	}
	for _, c := range catalogs {
		state.CatalogSources = append(state.CatalogSources, v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name}})
	}
	// The repository's own CatalogSources of images at quay.io/example/ (the example gives
	// no content for them): an empty catalog, pushed where the registry stands in for
	// quay.io/example/, read by both sides.
	standIns := standInCatalogs(t, reg, rendered)
	for _, c := range standIns {
		catalogs = append(catalogs, c.spec)
	}
	rep, res := previewReport(t, tree, state, preview.Options{Catalogs: catalogs, Image: images})
	var clusters []string
	for _, s := range rep.Subscriptions {
		if !slices.Contains(clusters, s.Cluster) {
			clusters = append(clusters, s.Cluster)
		}
	}
	if len(clusters) == 0 {
		t.Fatalf("example %s previews no Subscription", ex.dir)
	}
	if img != nil {
		checkBrings(t, rep, img)
	}
	for _, cluster := range clusters {
		name := cluster
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := env
			if ex.own {
				env = testenv.Own(t)
				olmtest.StartManager(t, env, olm.Options{DisableCopiedCSVs: true, MaxConcurrentReconciles: 4, GlobalCatalogNamespace: globalCatalogNamespace, CatalogImages: images})
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { olmtest.KeepDeploymentsAvailable(ctx, env.Client); close(done) }()
				t.Cleanup(func() { cancel(); <-done })
			}
			if img != nil {
				olmtest.EnsureNamespace(t, env, globalCatalogNamespace)
				olmtest.ImageCatalog(t, env, globalCatalogNamespace, imageCatalogName, img.Image)
			}
			runCluster(t, env, rep, res, ex.dir, cluster, standIns)
		})
	}
}

// checkBrings fails the test when the preview did not judge a bundle from its image: the
// bundle images were pushed for it to pull, and what it read must be what the catalog
// says (CRDs, install modes).
func checkBrings(t *testing.T, rep *report.Report, img *imageCatalog) {
	t.Helper()
	seen := 0
	for _, s := range rep.Subscriptions {
		b := s.Brings
		if b == nil {
			continue
		}
		seen++
		if b.Unseen != "" || b.Image == "" {
			t.Errorf("%s (cluster %s): the preview did not read bundle %s from its image: image %q, unseen %q", s.ID(), s.Cluster, b.CSV, b.Image, b.Unseen)
			continue
		}
		want, ok := img.Bundles[b.CSV]
		if !ok {
			t.Errorf("%s: brings %s, which is not a bundle of the catalog", s.ID(), b.CSV)
			continue
		}
		var crds []string
		for _, c := range b.CRDs {
			crds = append(crds, c.Name)
		}
		var owned []string
		for _, a := range want.Owns {
			owned = append(owned, a.CRDName())
		}
		if !slices.Equal(slices.Sorted(slices.Values(crds)), slices.Sorted(slices.Values(owned))) {
			t.Errorf("%s: bundle %s brings CRDs %v, the catalog says %v", s.ID(), b.CSV, crds, owned)
		}
		if !slices.Equal(slices.Sorted(slices.Values(b.InstallModes)), slices.Sorted(slices.Values(want.InstallModes))) {
			t.Errorf("%s: bundle %s brings install modes %v, the catalog says %v", s.ID(), b.CSV, b.InstallModes, want.InstallModes)
		}
	}
	if seen == 0 {
		t.Error("no Subscription of the example brings a bundle: nothing was read from an image")
	}
}

// runCluster applies the OLM objects of one cluster of a previewed example to the API
// server, with the OperatorGroups the preview says the cluster has outside Git, and
// compares.
func runCluster(t *testing.T, env *testenv.Env, rep *report.Report, res *check.Result, dir, cluster string, standIns []standIn) {
	want := clusterOutcome(rep, cluster)
	var namespaces []string
	addNamespace := func(ns string) {
		if ns != "" && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	subs := map[string]bool{}
	var objects []*unstructured.Unstructured
	for _, in := range res.Inputs {
		if in.Cluster != cluster {
			continue
		}
		for _, app := range in.Apps {
			for _, o := range app.Objects {
				u := &unstructured.Unstructured{Object: o.Object}
				if !slices.Contains(olmKinds, u.GetKind()) {
					continue
				}
				u = u.DeepCopy()
				if u.GetKind() == "Namespace" {
					addNamespace(u.GetName())
				} else {
					u.SetNamespace(o.Namespace)
					addNamespace(o.Namespace)
				}
				if u.GetKind() == "Subscription" {
					subs[u.GetNamespace()+"/"+u.GetName()] = true
				}
				if u.GetKind() == "CatalogSource" {
					image, _, _ := unstructured.NestedString(u.Object, "spec", "image")
					if i := slices.IndexFunc(standIns, func(c standIn) bool { return c.image == image }); i >= 0 {
						if err := unstructured.SetNestedField(u.Object, standIns[i].spec.Source, "spec", "image"); err != nil {
							t.Fatal(err)
						}
					}
				}
				objects = append(objects, u)
			}
		}
	}
	// The groups the cluster has outside Git (olmsync.yaml's policy.operatorGroups, or
	// its default): the controllers' cluster has them too.
	for _, g := range rep.OperatorGroups {
		if g.Cluster != cluster || g.App != "" {
			continue
		}
		og := &operatorsv1.OperatorGroup{
			TypeMeta:   metav1.TypeMeta{APIVersion: operatorsv1.SchemeGroupVersion.String(), Kind: operatorsv1.OperatorGroupKind},
			ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: g.Name},
		}
		if !slices.Equal(g.TargetNamespaces, []string{""}) {
			og.Spec.TargetNamespaces = g.TargetNamespaces
		}
		data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(og)
		if err != nil {
			t.Fatal(err)
		}
		addNamespace(g.Namespace)
		objects = append(objects, &unstructured.Unstructured{Object: data})
	}
	for _, g := range rep.OperatorGroups {
		if g.Cluster == cluster {
			addNamespace(g.Namespace)
		}
	}
	// Namespaces first, Subscriptions last, as a sync applies them.
	slices.SortStableFunc(objects, func(a, b *unstructured.Unstructured) int {
		return slices.Index(olmKinds, a.GetKind()) - slices.Index(olmKinds, b.GetKind())
	})
	for _, ns := range namespaces {
		olmtest.EnsureNamespace(t, env, ns)
	}
	for _, u := range objects {
		if u.GetKind() == "Namespace" {
			continue
		}
		olmtest.Create(t, env, u)
	}
	id := "example " + dir
	if cluster != "" {
		id += ", cluster " + cluster
	}
	converge(t, id, want, func() outcome { return observeNamespaces(t, env, namespaces, subs, want) }, id)
	t.Logf("%s: %s", id, summary(want))
}

// summary counts what the compared outcome holds, for the log: what the comparison covers.
func summary(o outcome) string {
	installed, planned, failed := 0, 0, 0
	for _, s := range o.Subscriptions {
		switch {
		case s.InstalledCSV != "":
			installed++
		case s.Plan != nil:
			planned++
		case s.ResolutionFailed != "":
			failed++
		}
	}
	return fmt.Sprintf("%d Subscriptions (%d installed, %d with a plan not run, %d failing resolution, %d left alone) and %d OperatorGroups agree",
		len(o.Subscriptions), installed, planned, failed, len(o.Subscriptions)-installed-planned-failed, len(o.Groups))
}

// configGroups are the OperatorGroups olmsync.yaml says the clusters have outside Git, as
// objects. The config is the repository's, so every cluster has the same.
func configGroups(t *testing.T, rendered *check.Result) []operatorsv1.OperatorGroup {
	t.Helper()
	var out []operatorsv1.OperatorGroup
	for i, in := range rendered.Inputs {
		var groups []operatorsv1.OperatorGroup
		for _, g := range in.Config.OperatorGroups {
			og := operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: g.Name}}
			if !g.Global {
				og.Spec.TargetNamespaces = slices.Clone(g.TargetNamespaces)
			}
			groups = append(groups, og)
		}
		if i > 0 && !equality.Semantic.DeepEqual(groups, out) {
			t.Fatalf("clusters %q and %q have different policy.operatorGroups", rendered.Inputs[0].Cluster, in.Cluster)
		}
		out = groups
	}
	return out
}

// standIn is a CatalogSource of the repository whose image is at quay.io/example/, with
// the empty catalog that stands in for it.
type standIn struct {
	image string // as the repository writes it
	spec  preview.CatalogSpec
}

// standInCatalogs pushes an empty catalog image for every CatalogSource of the rendered
// repository whose image is at quay.io/example/, where the registry stands in for it.
// Without it, the controllers could not read the catalog, and OLM fails the resolution
// of every namespace that sees a catalog it cannot read.
func standInCatalogs(t *testing.T, reg *olmtest.Registry, rendered *check.Result) []standIn {
	t.Helper()
	var out []standIn
	for _, in := range rendered.Inputs {
		for _, app := range in.Apps {
			for _, o := range app.Objects {
				u := &unstructured.Unstructured{Object: o.Object}
				if u.GetKind() != "CatalogSource" {
					continue
				}
				image, _, _ := unstructured.NestedString(u.Object, "spec", "image")
				if !strings.HasPrefix(image, exampleImages) || slices.ContainsFunc(out, func(c standIn) bool { return c.image == image }) {
					continue
				}
				ref, _ := reg.PushCatalog(t, strings.TrimPrefix(image, "quay.io/"), "")
				out = append(out, standIn{image: image, spec: preview.CatalogSpec{Name: u.GetName(), Namespace: o.Namespace, Source: ref}})
			}
		}
	}
	return out
}
