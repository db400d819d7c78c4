package operators

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// ErrNotOLMKind is returned by Decode for a manifest whose apiVersion/kind is not one of
// the operators.coreos.com kinds.
var ErrNotOLMKind = errors.New("not an operators.coreos.com kind")

// Decoded is one OLM manifest decoded into its typed object.
type Decoded struct {
	// Object is the typed object (for example *v1alpha1.Subscription).
	Object runtime.Object
	// GVK is the manifest's apiVersion and kind.
	GVK schema.GroupVersionKind
	// UnknownFields lists, as kubectl's strict field validation does, every field of the
	// manifest that the type has no place for ("unknown field \"spec.chanel\""). The
	// object is still decoded; these fields are not in it.
	UnknownFields []string
}

// Decode reads one YAML or JSON manifest of an operators.coreos.com kind. A field the
// types do not know is never dropped silently: it is listed in Decoded.UnknownFields.
// A manifest that is not valid YAML, that repeats a key, or whose values have the wrong
// type, is an error; so is one over the bounded reader's limits (internal/safeyaml: its
// size, its nodes, aliases expanding too far), refused before it is decoded.
//
// A JSON object (safeyaml.JSONObject: a catalog's bundle objects) is decoded as it is,
// to the object its YAML reading gives, except that a raw JSON value (a descriptor's
// value) keeps the spacing it was written with. Should that fail, it is read again the
// YAML way, which reads some JSON that JSON alone refuses (1.0 where an integer goes, as
// 1): what decoded before decodes the same, and what fails fails with YAML's error. Only
// JSON the YAML reader refused for its own reasons (a number past float64 in a raw
// value, nesting past its depth) may decode now where it did not.
func Decode(manifest []byte) (*Decoded, error) {
	if safeyaml.JSONObject(manifest) {
		if d, err := decodeJSON(manifest); err == nil {
			return d, nil
		}
	}
	if err := safeyaml.Check("", manifest); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	// Strict: a key given twice is an error naming its line, not a silent last-one-wins.
	data, err := yaml.YAMLToJSONStrict(manifest)
	if err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	return decodeJSON(data)
}

// decodeJSON is Decode of a manifest as JSON.
func decodeJSON(data []byte) (*Decoded, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &tm); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("parse apiVersion %q: %w", tm.APIVersion, err)
	}
	gvk := gv.WithKind(tm.Kind)
	if gvk.Group != GroupName || !Scheme.Recognizes(gvk) {
		return nil, fmt.Errorf("%s: %w", gvk, ErrNotOLMKind)
	}
	obj, err := Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	strictErrs, err := kjson.UnmarshalStrict(data, obj)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", gvk.Kind, err)
	}
	d := &Decoded{Object: obj, GVK: gvk}
	for _, e := range strictErrs {
		d.UnknownFields = append(d.UnknownFields, e.Error())
	}
	return d, nil
}
