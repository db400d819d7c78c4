package extension

import (
	"errors"
	"fmt"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// ErrNotV1Kind is returned by Decode for a manifest that is neither a ClusterExtension
// nor a ClusterCatalog of olm.operatorframework.io/v1.
var ErrNotV1Kind = errors.New("not an olm.operatorframework.io/v1 ClusterExtension or ClusterCatalog")

// Decoded is one OLM v1 manifest: exactly one of Extension and Catalog is set.
type Decoded struct {
	Extension *ClusterExtension
	Catalog   *ClusterCatalog
	// UnknownFields lists every field the types have no place for, as kubectl's strict
	// field validation words it ("unknown field \"spec.source.catalog.chanels\""); the
	// object is decoded without them.
	UnknownFields []string
}

// Decode reads one YAML or JSON manifest of a ClusterExtension or ClusterCatalog strictly,
// as api/operators.Decode reads OLM v0's kinds: a repeated key, a value of the wrong type
// or a manifest over the bounded reader's limits is an error, and an unknown field is
// listed, never dropped silently.
func Decode(manifest []byte) (*Decoded, error) {
	if err := safeyaml.Check("", manifest); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	data, err := yaml.YAMLToJSONStrict(manifest)
	if err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &tm); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	d := &Decoded{}
	var obj any
	switch {
	case tm.APIVersion == APIVersion && tm.Kind == KindClusterExtension:
		d.Extension = &ClusterExtension{}
		obj = d.Extension
	case tm.APIVersion == APIVersion && tm.Kind == KindClusterCatalog:
		d.Catalog = &ClusterCatalog{}
		obj = d.Catalog
	default:
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, ErrNotV1Kind)
	}
	strictErrs, err := kjson.UnmarshalStrict(data, obj)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", tm.Kind, err)
	}
	for _, e := range strictErrs {
		d.UnknownFields = append(d.UnknownFields, e.Error())
	}
	return d, nil
}
