package resolve

import (
	"encoding/json"
	"fmt"
	"strings"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
)

// BundleImageKind is the kind of a BundleImageReference: a step manifest that names the
// unpacked bundle image the step's object comes from, instead of holding the object.
const BundleImageKind = "BundleImage"

// BundleImageReference is the manifest of a step made from an unpacked bundle image. OLM
// writes a reference to the ConfigMap its unpack job filled ({"kind":"ConfigMap",...});
// olmsync unpacks in-process, so it names the image by digest, which is also the record of
// exactly what the plan installs. The executor makes the object again from the image
// (cached by digest) when it runs the step. Steps stay small this way: a plan of three
// large operators (camel-k, strimzi) would not fit an object's size limit with its
// manifests inline.
type BundleImageReference struct {
	Kind string `json:"kind"`
	// Image is the bundle image by digest: host/repository@sha256:….
	Image                  string `json:"image"`
	CatalogSourceName      string `json:"catalogSourceName"`
	CatalogSourceNamespace string `json:"catalogSourceNamespace"`
	Replaces               string `json:"replaces"`
	// Properties is the bundle lookup's properties: the catalog's properties of the bundle,
	// as the CSV's operatorframework.io/properties annotation holds them.
	Properties string `json:"properties"`
}

// String is the reference as a step manifest.
func (r BundleImageReference) String() string {
	r.Kind = BundleImageKind
	data, err := json.Marshal(r)
	if err != nil {
		panic(err) // strings only
	}
	return string(data)
}

// ParseBundleImageReference reads a step manifest that is a BundleImageReference; false
// for any other manifest.
func ParseBundleImageReference(manifest string) (BundleImageReference, bool) {
	if !strings.Contains(manifest, `"kind":"`+BundleImageKind+`"`) {
		return BundleImageReference{}, false
	}
	var r BundleImageReference
	if err := json.Unmarshal([]byte(manifest), &r); err != nil || r.Kind != BundleImageKind || r.Image == "" {
		return BundleImageReference{}, false
	}
	return r, true
}

// LookupReference is the reference of the steps unpacked for a bundle lookup from the
// image at digestRef.
func LookupReference(l v1alpha1.BundleLookup, digestRef string) BundleImageReference {
	r := BundleImageReference{Kind: BundleImageKind, Image: digestRef, Replaces: l.Replaces, Properties: l.Properties}
	if l.CatalogSourceRef != nil {
		r.CatalogSourceName, r.CatalogSourceNamespace = l.CatalogSourceRef.Name, l.CatalogSourceRef.Namespace
	}
	return r
}

// UnpackedSteps are the steps that install the bundle a reference names, made from its
// unpacked image exactly as from a catalog's inline content (BundleSteps): the image's CSV
// and objects, with the catalog's properties (ref.Properties; the image's own when empty,
// as OLM takes the lookup's), the CSV's spec.replaces set to ref.Replaces, in OLM's order
// (the CSV, the CRDs, the rest). Every step's manifest is the object itself.
func UnpackedSteps(namespace string, ref BundleImageReference, unpacked *catalog.Bundle) ([]v1alpha1.Step, error) {
	if unpacked == nil || unpacked.CSV == nil {
		return nil, fmt.Errorf("bundle image %s: no ClusterServiceVersion", ref.Image)
	}
	content := *unpacked
	if ref.Properties != "" {
		var doc struct {
			Properties []catalog.Property `json:"properties"`
		}
		if err := json.Unmarshal([]byte(ref.Properties), &doc); err != nil {
			return nil, fmt.Errorf("bundle image %s: properties of the bundle lookup: %w", ref.Image, err)
		}
		content.Properties = doc.Properties
	}
	steps, err := BundleSteps(namespace, Bundle{
		Name: unpacked.CSV.Name, Package: unpacked.Package, Replaces: ref.Replaces, Content: &content,
		Source: CatalogKey{Name: ref.CatalogSourceName, Namespace: ref.CatalogSourceNamespace},
	})
	if err != nil {
		return nil, err
	}
	return OrderSteps(steps), nil
}

// Referenced are the steps with each manifest replaced by the reference.
func Referenced(steps []v1alpha1.Step, ref BundleImageReference) []v1alpha1.Step {
	out := make([]v1alpha1.Step, len(steps))
	manifest := ref.String()
	for i, s := range steps {
		s.Resource.Manifest = manifest
		out[i] = s
	}
	return out
}

// StepManifest is the manifest of the step that the steps made from an image hold for s:
// the one of the same kind, name, group and version.
func StepManifest(steps []v1alpha1.Step, s v1alpha1.Step) (string, bool) {
	for _, x := range steps {
		r := x.Resource
		if r.Kind == s.Resource.Kind && r.Name == s.Resource.Name && r.Group == s.Resource.Group && r.Version == s.Resource.Version {
			return r.Manifest, true
		}
	}
	return "", false
}
