package catalogsource_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/catalogsource"
)

// TestLoadAfterAStaleRead: a ConfigMap catalog whose ConfigMap arrives after its
// CatalogSource (as a GitOps tool applies them) fails with ConfigMapError first; the reconcile
// the ConfigMap wakes runs before the cache holds that status write, and must still clear the
// reason and message once the catalog loads.
func TestLoadAfterAStaleRead(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "stale-read")
	key := client.ObjectKey{Namespace: ns, Name: "widgets"}
	olmtest.Create(t, env, &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeConfigmap, ConfigMap: "widgets"},
	})
	// What the cache holds until it sees the first status write: the CatalogSource as created.
	stale := &v1alpha1.CatalogSource{}
	if err := env.Client.Get(ctx, key, stale); err != nil {
		t.Fatal(err)
	}
	r := &catalogsource.Reconciler{
		Client:    &olmtest.StaleCache{Client: env.Client, Stale: stale},
		APIReader: env.Client,
		Registry:  catalogsource.NewRegistry("", resolve.Options{}),
	}
	reconcileAndGet := func() *v1alpha1.CatalogSource {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		cs := &v1alpha1.CatalogSource{}
		if err := env.Client.Get(ctx, key, cs); err != nil {
			t.Fatal(err)
		}
		return cs
	}

	cs := reconcileAndGet()
	if cs.Status.Reason != v1alpha1.CatalogSourceConfigMapError {
		t.Fatalf("status reason %q before the configmap exists, want %s", cs.Status.Reason, v1alpha1.CatalogSourceConfigMapError)
	}

	olmtest.Create(t, env, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: "widgets"},
		Data:       olmtest.ConfigMapData(t, []olmtest.Bundle{{Package: "widget", Version: "1.0.0"}}),
	})
	cs = reconcileAndGet()
	if cs.Status.Reason != "" || cs.Status.Message != "" {
		t.Errorf("status reason %q, message %q once the catalog loaded: want both cleared", cs.Status.Reason, cs.Status.Message)
	}
	if s := cs.Status.GRPCConnectionState; s == nil || s.LastObservedState != v1alpha1.ConnectionStateReady {
		t.Errorf("connection state %+v, want %s", s, v1alpha1.ConnectionStateReady)
	}
	if !apimeta.IsStatusConditionTrue(cs.Status.Conditions, catalogsource.ConditionReady) {
		t.Errorf("conditions %+v, want Ready", cs.Status.Conditions)
	}
}

// TestConfigMapCatalogOLMWouldNotServe: a ConfigMap catalog that operator-registry's loader
// refuses (here: no packages key) is not served, as OLM's configmap-server exits on it:
// TRANSIENT_FAILURE and Ready=False with the server's message. Once the key is added the
// catalog loads.
func TestConfigMapCatalogOLMWouldNotServe(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "cm-refused")
	key := client.ObjectKey{Namespace: ns, Name: "widgets"}
	data := olmtest.ConfigMapData(t, []olmtest.Bundle{{Package: "widget", Version: "1.0.0"}})
	packages := data[catalog.ConfigMapKeyPackages]
	delete(data, catalog.ConfigMapKeyPackages)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets"}, Data: data}
	olmtest.Create(t, env, cm)
	olmtest.Create(t, env, &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeConfigmap, ConfigMap: "widgets"},
	})
	reg := catalogsource.NewRegistry("", resolve.Options{})
	r := &catalogsource.Reconciler{Client: env.Client, APIReader: env.Client, Registry: reg}
	reconcileAndGet := func() *v1alpha1.CatalogSource {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		cs := &v1alpha1.CatalogSource{}
		if err := env.Client.Get(ctx, key, cs); err != nil {
			t.Fatal(err)
		}
		return cs
	}

	cs := reconcileAndGet()
	if s := cs.Status.GRPCConnectionState; s == nil || s.LastObservedState != v1alpha1.ConnectionStateTransientFailure {
		t.Errorf("connection state %+v, want %s", s, v1alpha1.ConnectionStateTransientFailure)
	}
	ready := apimeta.FindStatusCondition(cs.Status.Conditions, catalogsource.ConditionReady)
	const want = "error loading manifests from configmap: couldn't find expected key packages in configmap"
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Message != want {
		t.Errorf("Ready = %+v, want False with %q", ready, want)
	}
	if e, _ := reg.Get(key); e.Content != nil {
		t.Errorf("the registry serves %d packages from a catalog OLM would not serve", len(e.Content.Packages))
	}

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil { // the controller labelled it
		t.Fatal(err)
	}
	cm.Data[catalog.ConfigMapKeyPackages] = packages
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	cs = reconcileAndGet()
	if s := cs.Status.GRPCConnectionState; s == nil || s.LastObservedState != v1alpha1.ConnectionStateReady {
		t.Errorf("connection state %+v once the key is there, want %s", s, v1alpha1.ConnectionStateReady)
	}
}

// TestSpecInvalid: the API server accepts any sourceType, as OLM's schema does, and the
// controller says what is wrong with a spec in OLM's words (validateSourceType), reason
// SpecInvalidError: an unknown type, a configmap source without a ConfigMap, a grpc source
// with neither image nor address. A grpc source with an address alone is olmsync's own
// refusal (docs/olm.md).
func TestSpecInvalid(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "spec-invalid")
	r := &catalogsource.Reconciler{Client: env.Client, APIReader: env.Client, Registry: catalogsource.NewRegistry("", resolve.Options{})}
	for _, tt := range []struct {
		name string
		spec v1alpha1.CatalogSourceSpec
		want string
	}{
		{"goose", v1alpha1.CatalogSourceSpec{SourceType: "goose"}, "unknown sourcetype: goose"},
		{"configmap", v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeConfigmap}, "configmap name unset: must be set for sourcetype: configmap"},
		{"internal", v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeInternal}, "configmap name unset: must be set for sourcetype: internal"},
		{"grpc", v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc}, "image and address unset: at least one must be set for sourcetype: grpc"},
		{"address", v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Address: "registry.olm:50051"},
			"grpc catalog sources without spec.image (a registry server at spec.address) are not supported by olmsync"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := client.ObjectKey{Namespace: ns, Name: tt.name}
			olmtest.Create(t, env, &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tt.name}, Spec: tt.spec})
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err == nil {
				t.Error("reconcile: no error, want a terminal one")
			}
			cs := &v1alpha1.CatalogSource{}
			if err := env.Client.Get(ctx, key, cs); err != nil {
				t.Fatal(err)
			}
			if cs.Status.Reason != v1alpha1.CatalogSourceSpecInvalidError || cs.Status.Message != tt.want {
				t.Errorf("status %s: %q, want SpecInvalidError: %q", cs.Status.Reason, cs.Status.Message, tt.want)
			}
		})
	}
}

// TestConfigMapOwnedByItsCatalog: the ConfigMap a catalog is served from gets OLM's
// olm.managed: "false" and a non-blocking owner reference to its CatalogSource, without
// being loaded twice for it.
func TestConfigMapOwnedByItsCatalog(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "cm-owner")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets", Labels: map[string]string{"team": "a"}},
		Data: olmtest.ConfigMapData(t, []olmtest.Bundle{{Package: "widget", Version: "1.0.0"}})}
	olmtest.Create(t, env, cm)
	cs := &v1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets"},
		Spec: v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeConfigmap, ConfigMap: "widgets"}}
	olmtest.Create(t, env, cs)
	reg := catalogsource.NewRegistry("", resolve.Options{})
	r := &catalogsource.Reconciler{Client: env.Client, APIReader: env.Client, Registry: reg}
	for range 2 {
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cs)}); err != nil {
			t.Fatal(err)
		}
	}
	got := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["olm.managed"] != "false" || got.Labels["team"] != "a" {
		t.Errorf("labels %v, want olm.managed: \"false\" beside the ConfigMap's own", got.Labels)
	}
	want := []metav1.OwnerReference{{APIVersion: "operators.coreos.com/v1alpha1", Kind: "CatalogSource", Name: "widgets", UID: cs.UID,
		BlockOwnerDeletion: ptr.To(false), Controller: ptr.To(false)}}
	if diff := cmp.Diff(want, got.OwnerReferences); diff != "" {
		t.Errorf("owner references (-want +got):\n%s", diff)
	}
	if e, _ := reg.Get(client.ObjectKeyFromObject(cs)); e.Revision != string(got.UID)+"/"+got.ResourceVersion {
		t.Errorf("registry revision %s, want the labelled ConfigMap's %s/%s", e.Revision, got.UID, got.ResourceVersion)
	}
}

// TestImageCatalogHeldWithoutBundleObjects: a catalog image whose bundles carry their
// manifests as olm.bundle.object properties is held unpacked — each bundle's CSV and CRDs —
// without those properties, as OLM's registry serves bundles without them.
func TestImageCatalogHeldWithoutBundleObjects(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := olmtest.NewNamespace(t, env, "image-objects")
	images := olmtest.ServeRegistry(t)
	ref, _ := images.PushCatalog(t, "catalogs/objects:latest", olmtest.FBC(t, []olmtest.Bundle{
		{Package: "widget", Version: "1.0.0", Owns: []olmtest.API{{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets"}}},
	}))
	key := client.ObjectKey{Namespace: ns, Name: "objects"}
	olmtest.Create(t, env, &v1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec:       v1alpha1.CatalogSourceSpec{SourceType: v1alpha1.SourceTypeGrpc, Image: ref},
	})
	reg := catalogsource.NewRegistry("", resolve.Options{})
	r := &catalogsource.Reconciler{Client: env.Client, APIReader: env.Client, Registry: reg,
		Options: catalogsource.Options{Image: images.ImageOptions(catalog.ImageOptions{CacheDir: t.TempDir()})}}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	e, ok := reg.Get(key)
	if !ok || e.Content == nil || e.Content.Package("widget") == nil {
		t.Fatalf("registry entry %+v, want the catalog with package widget", e)
	}
	b := e.Content.Package("widget").Bundles[0]
	if b.CSV == nil || len(b.Objects) != 1 || b.Objects[0].Kind != "CustomResourceDefinition" {
		t.Fatalf("bundle %s holds CSV %v and objects %+v, want the CSV and its CRD", b.Name, b.CSV != nil, b.Objects)
	}
	for _, p := range b.Properties {
		if p.Type == catalog.PropertyBundleObject {
			t.Errorf("bundle %s still holds an %s property (%d bytes)", b.Name, p.Type, len(p.Value))
		}
	}
}
