package groups

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// Labels OLM puts on a CSV for each API it provides: olm.api.<hash>: provided.
const (
	providedAPILabelPrefix = "olm.api."
	providedAPILabelValue  = "provided"
	// apiSetSeparator separates the APIs of olm.providedAPIs.
	apiSetSeparator = ","
)

// API is one API a CSV provides, keyed as OLM keys it in olm.providedAPIs: kind, version and
// group (the plural is not part of the key).
type API struct {
	Kind, Version, Group string
}

// String is the API's form in olm.providedAPIs: Kind.version.group.
func (a API) String() string {
	return a.Kind + "." + a.Version + "." + a.Group
}

// APISet is a set of APIs.
type APISet map[API]struct{}

// NewAPISet returns a set holding apis.
func NewAPISet(apis ...API) APISet {
	s := make(APISet, len(apis))
	for _, a := range apis {
		s[a] = struct{}{}
	}
	return s
}

// ParseAPISet reads an olm.providedAPIs value as OLM does: spaces are removed, the rest is
// split on commas, and each token is Kind.version.group split at its first two dots (the
// group may hold more dots). A token with fewer than two dots is dropped, not an error:
// OLM ignores it too.
func ParseAPISet(value string) APISet {
	s := APISet{}
	for token := range strings.SplitSeq(strings.ReplaceAll(value, " ", ""), apiSetSeparator) {
		if gvk, _ := schema.ParseKindArg(token); gvk != nil {
			s[API{Kind: gvk.Kind, Version: gvk.Version, Group: gvk.Group}] = struct{}{}
		}
	}
	return s
}

// String is the set's olm.providedAPIs value: every API as Kind.version.group, sorted
// lexicographically, comma-separated, no spaces; "" for the empty set.
func (s APISet) String() string {
	names := make([]string, 0, len(s))
	for a := range s {
		names = append(names, a.String())
	}
	slices.Sort(names)
	return strings.Join(names, apiSetSeparator)
}

// Sorted returns the set's APIs in the order of their String form.
func (s APISet) Sorted() []API {
	return slices.SortedFunc(maps.Keys(s), func(a, b API) int { return strings.Compare(a.String(), b.String()) })
}

// Has reports whether a is in the set.
func (s APISet) Has(a API) bool {
	_, ok := s[a]
	return ok
}

// Union returns the APIs in s or in o.
func (s APISet) Union(o APISet) APISet {
	out := maps.Clone(s)
	if out == nil {
		out = APISet{}
	}
	maps.Copy(out, o)
	return out
}

// Intersection returns the APIs in both s and o.
func (s APISet) Intersection(o APISet) APISet {
	out := APISet{}
	for a := range s {
		if o.Has(a) {
			out[a] = struct{}{}
		}
	}
	return out
}

// Difference returns the APIs in s and not in o.
func (s APISet) Difference(o APISet) APISet {
	out := APISet{}
	for a := range s {
		if !o.Has(a) {
			out[a] = struct{}{}
		}
	}
	return out
}

// IsSubset reports whether every API of s is in o.
func (s APISet) IsSubset(o APISet) bool {
	for a := range s {
		if !o.Has(a) {
			return false
		}
	}
	return true
}

// InvalidCRDNameError is returned for a CSV that owns a CRD whose name is not <plural>.<group>:
// OLM cannot tell the group and stops processing the CSV.
type InvalidCRDNameError struct {
	CSVNamespace, CSVName string
	CRDName               string
}

func (e *InvalidCRDNameError) Error() string {
	return fmt.Sprintf("csv %s/%s: owned crd %q: name is not <plural>.<group>", e.CSVNamespace, e.CSVName, e.CRDName)
}

// ownedCRD is an owned CRD description with its name split into plural and group.
type ownedCRD struct {
	v1alpha1.CRDDescription
	Plural, Group string
}

// ownedCRDs returns the CSV's owned CRDs with plural and group taken from each CRD's name.
func ownedCRDs(csv *v1alpha1.ClusterServiceVersion) ([]ownedCRD, error) {
	out := make([]ownedCRD, 0, len(csv.Spec.CustomResourceDefinitions.Owned))
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		plural, group, ok := strings.Cut(d.Name, ".")
		if !ok {
			return nil, &InvalidCRDNameError{CSVNamespace: csv.Namespace, CSVName: csv.Name, CRDName: d.Name}
		}
		out = append(out, ownedCRD{CRDDescription: d, Plural: plural, Group: group})
	}
	return out, nil
}

// ProvidedAPIs returns the APIs a CSV provides: each owned CRD (kind and version from its
// description, group from the CRD's name <plural>.<group>) and each owned APIService. A CRD
// name without a dot is an *InvalidCRDNameError.
func ProvidedAPIs(csv *v1alpha1.ClusterServiceVersion) (APISet, error) {
	crds, err := ownedCRDs(csv)
	if err != nil {
		return nil, err
	}
	s := APISet{}
	for _, c := range crds {
		s[API{Kind: c.Kind, Version: c.Version, Group: c.Group}] = struct{}{}
	}
	for _, a := range csv.Spec.APIServiceDefinitions.Owned {
		s[API{Kind: a.Kind, Version: a.Version, Group: a.Group}] = struct{}{}
	}
	return s, nil
}

// GroupProvidedAPIs returns the APIs a group's olm.providedAPIs annotation lists.
func GroupProvidedAPIs(og *operatorsv1.OperatorGroup) APISet {
	return ParseAPISet(og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey])
}

// ProvidedAPILabels returns the labels OLM puts on a CSV for the APIs it provides:
// olm.api.<hex FNV-64a of Kind.version.group>: provided. Other controllers find a CSV by the
// APIs it provides through them.
func ProvidedAPILabels(csv *v1alpha1.ClusterServiceVersion) (map[string]string, error) {
	apis, err := ProvidedAPIs(csv)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(apis))
	for a := range apis {
		out[a.LabelKey()] = providedAPILabelValue
	}
	return out, nil
}

// ProvidedAPILabelValue is the value of a CSV's olm.api.<hash> label for an API it provides.
const ProvidedAPILabelValue = providedAPILabelValue

// LabelKey is the key of the label OLM puts on a CSV that provides the API:
// olm.api.<hex FNV-64a of Kind.version.group>. Controllers select the CSVs that provide an API
// (to requeue them when a group listing it changes) with LabelKey: ProvidedAPILabelValue.
func (a API) LabelKey() string {
	return providedAPILabelPrefix + apiHash(a)
}

// apiHash is the hex FNV-64a hash of the API's Kind.version.group, as OLM computes it.
func apiHash(a API) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(a.String()))
	return fmt.Sprintf("%x", h.Sum64())
}
