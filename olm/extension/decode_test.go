package extension

import (
	"errors"
	"slices"
	"testing"
)

func TestDecode(t *testing.T) {
	d, err := Decode([]byte(`apiVersion: olm.operatorframework.io/v1
kind: ClusterExtension
metadata: {name: argocd}
spec:
  namespace: argocd
  serviceAccount: {name: argocd-installer}
  source:
    sourceType: Catalog
    catalog:
      packageName: argocd-operator
      version: "0.6.x"
      chanels: [alpha]
      upgradeConstraintPolicy: SelfCertified
status:
  install:
    bundle: {name: argocd-operator.v0.6.0, version: 0.6.0}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := d.Extension
	if e == nil || e.Spec.Namespace != "argocd" || e.Spec.ServiceAccount.Name != "argocd-installer" ||
		e.Spec.Source.Catalog.Version != "0.6.x" || e.Spec.Source.Catalog.UpgradeConstraintPolicy != UpgradeConstraintPolicySelfCertified ||
		e.Status.Install.Bundle.Version != "0.6.0" {
		t.Errorf("decoded %+v", e)
	}
	if want := []string{`unknown field "spec.source.catalog.chanels"`}; !slices.Equal(d.UnknownFields, want) {
		t.Errorf("unknown fields %q, want %q", d.UnknownFields, want)
	}

	d, err = Decode([]byte(`{"apiVersion":"olm.operatorframework.io/v1","kind":"ClusterCatalog","metadata":{"name":"operatorhub"},
"spec":{"priority":-10,"availabilityMode":"Unavailable","source":{"type":"Image","image":{"ref":"quay.io/operatorhubio/catalog:latest"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Catalog; c == nil || c.Spec.Priority != -10 || c.Spec.Source.Image.Ref != "quay.io/operatorhubio/catalog:latest" || c.Spec.AvailabilityMode != AvailabilityModeUnavailable {
		t.Errorf("decoded %+v", d.Catalog)
	}

	if _, err := Decode([]byte("apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\n")); !errors.Is(err, ErrNotV1Kind) {
		t.Errorf("a Subscription: %v, want ErrNotV1Kind", err)
	}
	if _, err := Decode([]byte("apiVersion: olm.operatorframework.io/v1\nkind: ClusterCatalog\nspec: {priority: high}\n")); err == nil {
		t.Error("a priority of the wrong type decoded")
	}
	if _, err := Decode([]byte("apiVersion: olm.operatorframework.io/v1\nkind: ClusterCatalog\nkind: ClusterCatalog\n")); err == nil {
		t.Error("a repeated key decoded")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nspec: {namespace: a, source: {sourceType: Catalog, catalog: {packageName: p, version: '>=1'}}}\n"))
	f.Add([]byte(`{"apiVersion":"olm.operatorframework.io/v1","kind":"ClusterCatalog","spec":{"source":{"type":"Image","image":{"ref":"x/y:z"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Decode(data)
		if err != nil {
			return
		}
		if (d.Extension == nil) == (d.Catalog == nil) {
			t.Fatalf("want exactly one object, got %+v", d)
		}
		if d.Extension != nil && d.Extension.Spec.Source.Catalog != nil {
			_, _, _ = Resolve(d.Extension, []Catalog{cat("a", 0, content(etcd()))})
		}
	})
}
