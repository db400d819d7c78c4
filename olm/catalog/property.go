package catalog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// The property types OLM gives meaning to.
const (
	PropertyPackage         = "olm.package"
	PropertyGVK             = "olm.gvk"
	PropertyGVKRequired     = "olm.gvk.required"
	PropertyPackageRequired = "olm.package.required"
	PropertyLabel           = "olm.label"
	PropertyLabelRequired   = "olm.label.required"
	PropertyConstraint      = "olm.constraint"
	PropertyBundleObject    = "olm.bundle.object"
	PropertyCSVMetadata     = "olm.csv.metadata"
	PropertyDeprecated      = "olm.deprecated"
)

// Property is one typed fact about a bundle (or a package or channel) as FBC writes it.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// NewProperty builds a property from a value that encodes to JSON.
func NewProperty(typ string, value any) (Property, error) {
	data, err := json.Marshal(value)
	if err != nil {
		return Property{}, fmt.Errorf("encode %s property: %w", typ, err)
	}
	return Property{Type: typ, Value: data}, nil
}

// GVK is an API a bundle provides (olm.gvk) or requires (olm.gvk.required).
type GVK struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// String is OLM's Kind.version.group notation.
func (g GVK) String() string { return g.Kind + "." + g.Version + "." + g.Group }

// PackageProperty is the olm.package property: which package and version a bundle is.
type PackageProperty struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	Release     string `json:"release,omitempty"`
}

// PackageRequirement is an olm.package.required property (or the package clause of an
// olm.constraint): a bundle of the package whose version is in the semver range.
type PackageRequirement struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

// Constraint is an olm.constraint property: exactly one of its clauses is set; All, Any
// and Not combine further constraints.
type Constraint struct {
	FailureMessage string              `json:"failureMessage,omitempty"`
	GVK            *GVK                `json:"gvk,omitempty"`
	Package        *PackageRequirement `json:"package,omitempty"`
	All            *CompoundConstraint `json:"all,omitempty"`
	Any            *CompoundConstraint `json:"any,omitempty"`
	Not            *CompoundConstraint `json:"not,omitempty"`
	CEL            *CELConstraint      `json:"cel,omitempty"`
}

// CompoundConstraint is the list under all, any or not.
type CompoundConstraint struct {
	Constraints []Constraint `json:"constraints"`
}

// CELConstraint is a CEL rule evaluated over a candidate bundle's properties.
type CELConstraint struct {
	Rule string `json:"rule"`
}

// CSVMetadata is the olm.csv.metadata property: what a console shows of a CSV, carried in
// an FBC without the CSV itself.
type CSVMetadata struct {
	Annotations               map[string]string                           `json:"annotations,omitempty"`
	APIServiceDefinitions     operatorsv1alpha1.APIServiceDefinitions     `json:"apiServiceDefinitions,omitzero"`
	CustomResourceDefinitions operatorsv1alpha1.CustomResourceDefinitions `json:"crdDescriptions,omitzero"`
	Capabilities              string                                      `json:"capabilities,omitempty"`
	Description               string                                      `json:"description,omitempty"`
	DisplayName               string                                      `json:"displayName,omitempty"`
	InstallModes              []operatorsv1alpha1.InstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                                    `json:"keywords,omitempty"`
	Labels                    map[string]string                           `json:"labels,omitempty"`
	Links                     []operatorsv1alpha1.AppLink                 `json:"links,omitempty"`
	Maintainers               []operatorsv1alpha1.Maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                                      `json:"maturity,omitempty"`
	MinKubeVersion            string                                      `json:"minKubeVersion,omitempty"`
	NativeAPIs                []metav1.GroupVersionKind                   `json:"nativeAPIs,omitempty"`
	Provider                  *operatorsv1alpha1.AppLink                  `json:"provider,omitempty"`
}

// BundleProperties is the typed view of a bundle's properties. Types OLM does not give a
// meaning to are left out, as OLM ignores them.
type BundleProperties struct {
	// Packages holds every olm.package property; a valid bundle has exactly one.
	Packages         []PackageProperty
	Provides         []GVK
	Requires         []GVK
	RequiresPackages []PackageRequirement
	Labels           []string
	RequiresLabels   []string
	Constraints      []Constraint
	Metadata         *CSVMetadata
	// Objects are the decoded manifests of olm.bundle.object properties. A catalog reader
	// unpacks them into Bundle.CSV and Bundle.Objects and leaves this empty.
	Objects [][]byte
	// Deprecated is true when the bundle carries the legacy olm.deprecated property, which
	// makes OLM refuse it for resolution.
	Deprecated bool
}

// Package returns the bundle's olm.package property when there is exactly one.
func (bp *BundleProperties) Package() (PackageProperty, bool) {
	if len(bp.Packages) != 1 {
		return PackageProperty{}, false
	}
	return bp.Packages[0], true
}

// Props returns the typed view of the bundle's properties. Bundles read by this package
// have it parsed already; for others it is parsed now.
func (b *Bundle) Props() (*BundleProperties, error) {
	if b.props != nil {
		return b.props, b.propsErr
	}
	return ParseProperties(b.Properties)
}

// parseProperties caches the typed view of the bundle's properties and takes the bundle's
// version from its olm.package property.
func (b *Bundle) parseProperties() {
	b.props, b.propsErr = ParseProperties(b.Properties)
	if pp, ok := b.props.Package(); ok {
		if v, err := ParseVersion(pp.Version); err == nil {
			b.Version = v
		}
	}
}

// ParseProperties reads the properties OLM gives a meaning to. An error names every
// property that could not be read (by index and type); the others are still returned.
func ParseProperties(props []Property) (*BundleProperties, error) {
	bp := &BundleProperties{}
	var errs []error
	for i, p := range props {
		if err := bp.add(p); err != nil {
			errs = append(errs, fmt.Errorf("property %d (%s): %w", i, p.Type, err))
		}
	}
	return bp, errors.Join(errs...)
}

func (bp *BundleProperties) add(p Property) error {
	switch p.Type {
	case PropertyPackage:
		return appendValue(p.Value, &bp.Packages)
	case PropertyGVK:
		return appendValue(p.Value, &bp.Provides)
	case PropertyGVKRequired:
		return appendValue(p.Value, &bp.Requires)
	case PropertyPackageRequired:
		return appendValue(p.Value, &bp.RequiresPackages)
	case PropertyLabel, PropertyLabelRequired:
		var v struct {
			Label string `json:"label"`
		}
		if err := decodeValue(p.Value, &v); err != nil {
			return err
		}
		if p.Type == PropertyLabel {
			bp.Labels = append(bp.Labels, v.Label)
		} else {
			bp.RequiresLabels = append(bp.RequiresLabels, v.Label)
		}
		return nil
	case PropertyConstraint:
		var c Constraint
		if err := decodeValue(p.Value, &c); err != nil {
			return err
		}
		if err := c.validate(); err != nil {
			return err
		}
		bp.Constraints = append(bp.Constraints, c)
		return nil
	case PropertyCSVMetadata:
		var m CSVMetadata
		if err := decodeValue(p.Value, &m); err != nil {
			return err
		}
		bp.Metadata = &m
		return nil
	case PropertyBundleObject:
		obj, err := decodeBundleObject(p.Value)
		if err != nil {
			return err
		}
		bp.Objects = append(bp.Objects, obj)
		return nil
	case PropertyDeprecated:
		bp.Deprecated = true
		return nil
	}
	return nil
}

func appendValue[T any](raw json.RawMessage, list *[]T) error {
	var v T
	if err := decodeValue(raw, &v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

// decodeValue reads a property value. A missing value (JSON null) is an error: every
// property type OLM knows needs one.
func decodeValue(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return errors.New("value is missing")
	}
	return json.Unmarshal(raw, v)
}

// decodeBundleObject reads an olm.bundle.object value: {"data": <base64 manifest>}.
func decodeBundleObject(raw json.RawMessage) ([]byte, error) {
	var v struct {
		Data []byte `json:"data"`
	}
	if err := decodeValue(raw, &v); err != nil {
		return nil, err
	}
	if len(v.Data) == 0 {
		return nil, errors.New("data is empty")
	}
	return v.Data, nil
}

// bundleObjectProperty is the olm.bundle.object property carrying one manifest.
func bundleObjectProperty(manifest []byte) Property {
	data, _ := json.Marshal(struct {
		Data string `json:"data"`
	}{base64.StdEncoding.EncodeToString(manifest)})
	return Property{Type: PropertyBundleObject, Value: data}
}

// validate checks that a constraint has exactly one clause, recursively, as OLM's
// constraint parser does.
func (c Constraint) validate() error {
	set := 0
	for _, isSet := range []bool{c.GVK != nil, c.Package != nil, c.All != nil, c.Any != nil, c.Not != nil, c.CEL != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("constraint must have exactly one of gvk, package, all, any, not, cel; found %d", set)
	}
	for _, cc := range []*CompoundConstraint{c.All, c.Any, c.Not} {
		if cc == nil {
			continue
		}
		for i, sub := range cc.Constraints {
			if err := sub.validate(); err != nil {
				return fmt.Errorf("constraints[%d]: %w", i, err)
			}
		}
	}
	return nil
}
