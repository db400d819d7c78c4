package catalog

import (
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// The formats that carry a CSV (bundle directories, package manifests, ConfigMaps) become
// FBC bundles the way opm renders them: properties derived from the CSV and its objects,
// and a channel entry whose edges are the CSV's replaces, skips and olm.skipRange.

// bundleFromCSV builds the bundle of a CSV and its objects. extra are the properties of
// the bundle's metadata (dependencies.yaml, properties.yaml), in the order opm adds them
// after the derived ones.
func bundleFromCSV(pkg string, csv *operatorsv1alpha1.ClusterServiceVersion, objects []Object, extra []Property, o Origin) *Bundle {
	b := &Bundle{Name: csv.Name, Package: pkg, CSV: csv, Objects: objects, Origin: o}
	for _, img := range csv.Spec.RelatedImages {
		b.RelatedImages = append(b.RelatedImages, RelatedImage{Name: img.Name, Image: img.Image})
	}
	b.Properties = append(b.Properties, mustProperty(PropertyPackage, PackageProperty{PackageName: pkg, Version: string(csv.Spec.Version), Release: csv.Spec.Release}))
	for _, gvk := range providedAPIs(b) {
		b.Properties = append(b.Properties, mustProperty(PropertyGVK, gvk))
	}
	for _, gvk := range requiredAPIs(csv) {
		b.Properties = append(b.Properties, mustProperty(PropertyGVKRequired, gvk))
	}
	b.Properties = append(b.Properties, extra...)
	b.Properties = append(b.Properties, mustProperty(PropertyCSVMetadata, csvMetadata(csv)))
	b.parseProperties()
	return b
}

// mustProperty builds a property from a value of this package's own types, which always
// encode.
func mustProperty(typ string, value any) Property {
	p, err := NewProperty(typ, value)
	if err != nil {
		panic(err)
	}
	return p
}

// csvMetadata is the olm.csv.metadata opm derives from a CSV.
func csvMetadata(csv *operatorsv1alpha1.ClusterServiceVersion) CSVMetadata {
	return CSVMetadata{
		Annotations:               csv.Annotations,
		APIServiceDefinitions:     csv.Spec.APIServiceDefinitions,
		CustomResourceDefinitions: csv.Spec.CustomResourceDefinitions,
		Capabilities:              csv.Annotations["capabilities"],
		Description:               csv.Spec.Description,
		DisplayName:               csv.Spec.DisplayName,
		InstallModes:              csv.Spec.InstallModes,
		Keywords:                  csv.Spec.Keywords,
		Labels:                    csv.Labels,
		Links:                     csv.Spec.Links,
		Maintainers:               csv.Spec.Maintainers,
		Maturity:                  csv.Spec.Maturity,
		MinKubeVersion:            csv.Spec.MinKubeVersion,
		NativeAPIs:                csv.Spec.NativeAPIs,
		Provider:                  csv.Spec.Provider,
	}
}

// entryFromCSV is the channel entry a CSV stands for: its name and its upgrade edges.
func entryFromCSV(csv *operatorsv1alpha1.ClusterServiceVersion, o Origin) ChannelEntry {
	return ChannelEntry{
		Name:      csv.Name,
		Replaces:  csv.Spec.Replaces,
		Skips:     csv.Spec.Skips,
		SkipRange: csv.Annotations[operatorsv1alpha1.SkipRangeAnnotationKey],
		Origin:    o,
	}
}
