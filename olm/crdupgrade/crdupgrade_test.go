package crdupgrade_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/olm/crdupgrade"
)

// Small builders: crd("v1alpha1", "v1beta1") is a CRD serving both versions, the first the
// storage version, with a schema in which spec.scalar is an integer.

type crdBuilder struct {
	*apiextensionsv1.CustomResourceDefinition
}

func crd(versions ...string) crdBuilder {
	c := &apiextensionsv1.CustomResourceDefinition{}
	c.Name = "testcrds.cluster.com"
	c.Spec.Group = "cluster.com"
	c.Spec.Scope = apiextensionsv1.NamespaceScoped
	c.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Kind: "testcrd", Plural: "testcrds"}
	for i, v := range versions {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v, Served: true, Storage: i == 0, Schema: schema(nil, nil),
		})
	}
	if len(versions) > 0 {
		c.Status.StoredVersions = []string{versions[0]}
	}
	return crdBuilder{c}
}

func (b crdBuilder) version(name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range b.Spec.Versions {
		if b.Spec.Versions[i].Name == name {
			return &b.Spec.Versions[i]
		}
	}
	panic("no version " + name)
}

func (b crdBuilder) unserved(name string) crdBuilder { b.version(name).Served = false; return b }

func (b crdBuilder) storage(name string) crdBuilder {
	for i := range b.Spec.Versions {
		b.Spec.Versions[i].Storage = b.Spec.Versions[i].Name == name
	}
	return b
}

func (b crdBuilder) stored(names ...string) crdBuilder { b.Status.StoredVersions = names; return b }

// minimum sets a minimum on spec.scalar in the version's schema.
func (b crdBuilder) minimum(name string, minimum float64) crdBuilder {
	b.version(name).Schema = schema(&minimum, nil)
	return b
}

// requires makes spec fields required in the version's schema.
func (b crdBuilder) requires(name string, fields ...string) crdBuilder {
	b.version(name).Schema = schema(nil, fields)
	return b
}

func (b crdBuilder) noSchema(name string) crdBuilder { b.version(name).Schema = nil; return b }

func (b crdBuilder) webhook() crdBuilder {
	b.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
	return b
}

func schema(minimum *float64, required []string) *apiextensionsv1.CustomResourceValidation {
	return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {
				Type:     "object",
				Required: required,
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"scalar": {Type: "integer", Minimum: minimum},
					"name":   {Type: "string"},
				},
			},
		},
	}}
}

// cr is a custom resource of the test CRD at the version with the given spec.
func cr(version, namespace, name string, spec map[string]any) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("cluster.com/" + version)
	u.SetKind("testcrd")
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func TestCheck(t *testing.T) {
	scalar2 := map[string]any{"scalar": int64(2)}
	tests := []struct {
		name         string
		existing     crdBuilder
		updated      crdBuilder
		crs          []unstructured.Unstructured
		want         string // the error, empty when the update is allowed
		wantReason   crdupgrade.Reason
		wantWarnings []string
	}{
		{
			name:     "the same CRD",
			existing: crd("v1alpha1"), updated: crd("v1alpha1"),
			crs: []unstructured.Unstructured{cr("v1alpha1", "ns", "a", scalar2)},
		},
		{
			// Seed 001/004, "Adding a new CRD version": v1beta1 added and made the storage version.
			name:     "seed: a new version added as the storage version",
			existing: crd("v1alpha1"), updated: crd("v1alpha1", "v1beta1").storage("v1beta1"),
			crs: []unstructured.Unstructured{cr("v1alpha1", "ns", "a", scalar2)},
		},
		{
			// Seed: "OLM does not allow a serving version of a CRD to be removed right away."
			name:     "seed: a served version removed at once",
			existing: crd("v1alpha1", "v1beta1").storage("v1beta1").stored("v1beta1"), updated: crd("v1beta1"),
			want:       `refusing to update "testcrds.cluster.com": new CRD removes version v1alpha1 that the existing CRD serves (set served: false on it first, and remove it in a later upgrade)`,
			wantReason: crdupgrade.ReasonServedVersionRemoved,
		},
		{
			// Seed, deprecation step 1: the deprecated version is set to served: false.
			name:     "seed: a version set to served: false",
			existing: crd("v1alpha1", "v1beta1").storage("v1beta1"), updated: crd("v1alpha1", "v1beta1").storage("v1beta1").unserved("v1alpha1"),
		},
		{
			// Seed, deprecation step 4: the non-serving version is removed in a later upgrade,
			// once it is no longer a stored version.
			name:     "seed: an unserved version that is not stored removed later",
			existing: crd("v1alpha1", "v1beta1").storage("v1beta1").unserved("v1alpha1").stored("v1beta1"), updated: crd("v1beta1"),
		},
		{
			// The seed's note: a version that is or was the storage version must first leave
			// status.storedVersions. OLM's code refuses the update with its data-loss message.
			name:     "an unserved version still in storedVersions removed",
			existing: crd("v1alpha1", "v1beta1").storage("v1beta1").unserved("v1alpha1").stored("v1alpha1", "v1beta1"), updated: crd("v1beta1"),
			want:       `risk of data loss updating "testcrds.cluster.com": new CRD removes version v1alpha1 that is listed as a stored version on the existing CRD`,
			wantReason: crdupgrade.ReasonStoredVersionRemoved,
		},
		{
			// OLM's own test case ("backwards incompatible change"), same message.
			name:     "an existing custom resource the new schema refuses",
			existing: crd("v1alpha1"), updated: crd("v1alpha1").minimum("v1alpha1", 3),
			crs:        []unstructured.Unstructured{cr("v1alpha1", "", "my-cr-1", scalar2)},
			want:       `error validating existing CRs against new CRD's schema for "testcrds.cluster.com": error validating cluster.com/v1alpha1, Kind=testcrd "my-cr-1": updated validation is too restrictive: [].spec.scalar: Invalid value: 2: spec.scalar in body should be greater than or equal to 3`,
			wantReason: crdupgrade.ReasonInvalidCustomResource,
		},
		{
			name:     "a required field the custom resources lack, named with their namespace",
			existing: crd("v1"), updated: crd("v1").requires("v1", "name"),
			crs: []unstructured.Unstructured{
				cr("v1", "team-a", "good", map[string]any{"name": "x"}),
				cr("v1", "team-b", "bad", scalar2),
			},
			want:       `error validating existing CRs against new CRD's schema for "testcrds.cluster.com": error validating cluster.com/v1, Kind=testcrd "team-b/bad": updated validation is too restrictive: [].spec.name: Required value`,
			wantReason: crdupgrade.ReasonInvalidCustomResource,
		},
		{
			name:     "custom resources that satisfy the new schema",
			existing: crd("v1"), updated: crd("v1").minimum("v1", 1),
			crs: []unstructured.Unstructured{cr("v1", "ns", "a", scalar2)},
		},
		{
			name:     "a version the new CRD no longer serves is not validated",
			existing: crd("v1", "v2"), updated: crd("v1", "v2").unserved("v1").minimum("v1", 3),
			crs: []unstructured.Unstructured{cr("v1", "ns", "a", scalar2)},
		},
		{
			name:     "a version the existing CRD did not serve is not validated",
			existing: crd("v1", "v2").unserved("v2"), updated: crd("v1", "v2").minimum("v2", 3),
			crs: []unstructured.Unstructured{cr("v2", "ns", "a", scalar2)},
		},
		{
			name:     "a version without a schema validates nothing",
			existing: crd("v1"), updated: crd("v1").noSchema("v1"),
			crs: []unstructured.Unstructured{cr("v1", "ns", "a", map[string]any{"scalar": "not a number"})},
		},
		{
			// OLM tolerates a too-restrictive schema when the new CRD converts through a webhook,
			// with a Warning event.
			name:     "webhook conversion turns a refused custom resource into a warning",
			existing: crd("v1"), updated: crd("v1").minimum("v1", 3).webhook(),
			crs:          []unstructured.Unstructured{cr("v1", "ns", "a", scalar2)},
			wantWarnings: []string{`error validating existing CRs against new CRD's schema for "testcrds.cluster.com": error validating cluster.com/v1, Kind=testcrd "ns/a": updated validation is too restrictive: [].spec.scalar: Invalid value: 2: spec.scalar in body should be greater than or equal to 3`},
		},
		{
			name:     "webhook conversion does not excuse a stored version removed",
			existing: crd("v1", "v2").unserved("v1").storage("v2").stored("v1", "v2"), updated: crd("v2").webhook(),
			want:       `risk of data loss updating "testcrds.cluster.com": new CRD removes version v1 that is listed as a stored version on the existing CRD`,
			wantReason: crdupgrade.ReasonStoredVersionRemoved,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := crdupgrade.Check(tt.existing.CustomResourceDefinition, tt.updated.CustomResourceDefinition, tt.crs)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check: %v, want the update allowed", err)
				}
			} else {
				if err == nil {
					t.Fatalf("Check allowed the update, want %q", tt.want)
				}
				if err.Error() != tt.want {
					t.Errorf("Check error:\n got %s\nwant %s", err, tt.want)
				}
				var ce *crdupgrade.Error
				if !errors.As(err, &ce) || ce.Reason != tt.wantReason {
					t.Errorf("Check error %#v, want an *Error with reason %s", err, tt.wantReason)
				}
			}
			if diff := cmp.Diff(tt.wantWarnings, got.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckRefusesMisuse(t *testing.T) {
	other := crd("v1")
	other.Name = "others.cluster.com"
	if _, err := crdupgrade.Check(crd("v1").CustomResourceDefinition, other.CustomResourceDefinition, nil); err == nil {
		t.Error("Check accepted two different CRDs")
	}
	if _, err := crdupgrade.Check(nil, crd("v1").CustomResourceDefinition, nil); err == nil {
		t.Error("Check accepted a missing existing CRD")
	}
	wrong := cr("v1", "ns", "a", nil)
	wrong.SetKind("Other")
	_, err := crdupgrade.Check(crd("v1").CustomResourceDefinition, crd("v1").CustomResourceDefinition, []unstructured.Unstructured{wrong})
	if err == nil || err.Error() != `check CRD upgrade of "testcrds.cluster.com": custom resource "ns/a" is a cluster.com/v1, Kind=Other, not a testcrd.cluster.com` {
		t.Errorf("Check with a custom resource of another kind: %v", err)
	}
}

func TestCheckDoesNotChangeItsInput(t *testing.T) {
	existing, updated := crd("v1"), crd("v1").minimum("v1", 3).webhook()
	crs := []unstructured.Unstructured{cr("v1", "ns", "a", map[string]any{"scalar": int64(2)})}
	before := []any{existing.DeepCopy(), updated.DeepCopy(), crs[0].DeepCopy()}
	if _, err := crdupgrade.Check(existing.CustomResourceDefinition, updated.CustomResourceDefinition, crs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, []any{existing.CustomResourceDefinition, updated.CustomResourceDefinition, &crs[0]}); diff != "" {
		t.Errorf("Check changed its input (-before +after):\n%s", diff)
	}
}

func TestDecode(t *testing.T) {
	v1beta1 := `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: etcdclusters.etcd.database.coreos.com
spec:
  group: etcd.database.coreos.com
  version: v1beta2
  scope: Namespaced
  names: {kind: EtcdCluster, listKind: EtcdClusterList, plural: etcdclusters, singular: etcdcluster}
  validation:
    openAPIV3Schema:
      type: object
      properties:
        spec: {type: object, properties: {size: {type: integer, minimum: 1}}}
`
	got, err := crdupgrade.Decode([]byte(v1beta1))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Versions) != 1 {
		t.Fatalf("versions = %+v, want the one v1beta2", got.Spec.Versions)
	}
	v := got.Spec.Versions[0]
	if v.Name != "v1beta2" || !v.Served || !v.Storage {
		t.Errorf("version = %s served=%v storage=%v, want v1beta2 served and stored", v.Name, v.Served, v.Storage)
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["size"].Minimum == nil {
		t.Errorf("the top-level validation did not move into the version: %+v", v.Schema)
	}

	// The decoded CRD works as the new side of a check: size 0 is refused.
	existing := got.DeepCopy()
	existing.Spec.Versions[0].Schema = nil
	bad := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(0)}}}
	bad.SetAPIVersion("etcd.database.coreos.com/v1beta2")
	bad.SetKind("EtcdCluster")
	bad.SetNamespace("ns")
	bad.SetName("example")
	if _, err := crdupgrade.Check(existing, got, []unstructured.Unstructured{bad}); err == nil {
		t.Error("Check accepted size 0 against a schema with minimum 1")
	}

	v1, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := crdupgrade.Decode(v1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got.Spec, again.Spec); diff != "" {
		t.Errorf("a v1 CRD does not decode to itself (-first +again):\n%s", diff)
	}

	for _, bad := range []string{"kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\n", "{", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {versions: 3}\n"} {
		if _, err := crdupgrade.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
}
