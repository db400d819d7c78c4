package resolve

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/groups"
)

// PropertiesAnnotation is the CSV annotation in which OLM (and olmsync's InstallPlan steps)
// records the properties of the bundle a CSV came from: {"properties":[{type, value}...]}.
// Resolution reads an installed CSV's package, provided APIs and dependencies from it.
const PropertiesAnnotation = "operatorframework.io/properties"

// existingCatalog is the name OLM gives the virtual catalog of installed CSVs.
const existingCatalog = "@existing"

// installedEntries turns the namespace's CSVs into entries of the virtual catalog
// @existing/<namespace>, as OLM's csvSource does: copied CSVs are left out, and with
// fail-forward the Replacing CSVs HiddenByFailForward names; properties come
// from the properties annotation, or, for a CSV without one, from its owned and required CRDs
// and API services plus the package of the one Subscription whose installedCSV names it.
func installedEntries(ns Namespace) ([]*entry, error) {
	var out []*entry
	for i := range ns.CSVs {
		csv := &ns.CSVs[i]
		if groups.IsCopied(csv) || ns.FailForward && HiddenByFailForward(csv, ns.CSVs) {
			continue
		}
		props, err := installedProperties(csv, ns.Subscriptions)
		if err != nil {
			return nil, err
		}
		e := &entry{
			id:    fmt.Sprintf("%s/%s//%s", existingCatalog, ns.Name, csv.Name),
			name:  csv.Name,
			csv:   csv,
			props: props,
		}
		bp, _ := catalog.ParseProperties(props) // a property that cannot be read counts for nothing, as in OLM
		if pp, ok := bp.Package(); ok {
			e.pkg = pp.PackageName
		}
		e.provides, e.labels, e.deprecated = bp.Provides, bp.Labels, bp.Deprecated
		if v, err := csv.Spec.Version.Semver(); err == nil && csv.Spec.Version != "" {
			e.version = &v
		}
		out = append(out, e)
	}
	return out, nil
}

func installedProperties(csv *v1alpha1.ClusterServiceVersion, subs []v1alpha1.Subscription) ([]catalog.Property, error) {
	if anno, ok := csv.Annotations[PropertiesAnnotation]; ok {
		var doc struct {
			Properties []catalog.Property `json:"properties"`
		}
		if err := json.Unmarshal([]byte(anno), &doc); err != nil {
			return nil, fmt.Errorf("failed to retrieve properties of csv %q: %w", csv.Name, err)
		}
		return doc.Properties, nil
	}
	var props []catalog.Property
	add := func(typ string, v any) {
		p, err := catalog.NewProperty(typ, v)
		if err == nil {
			props = append(props, p)
		}
	}
	crdGroup := func(name string) (string, error) {
		_, group, ok := strings.Cut(name, ".")
		if !ok {
			return "", fmt.Errorf("error parsing crd name: %s", name)
		}
		return group, nil
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		group, err := crdGroup(d.Name)
		if err != nil {
			return nil, err
		}
		add(catalog.PropertyGVK, catalog.GVK{Group: group, Kind: d.Kind, Version: d.Version})
	}
	for _, d := range csv.Spec.APIServiceDefinitions.Owned {
		add(catalog.PropertyGVK, catalog.GVK{Group: d.Group, Kind: d.Kind, Version: d.Version})
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Required {
		group, err := crdGroup(d.Name)
		if err != nil {
			return nil, err
		}
		add(catalog.PropertyGVKRequired, catalog.GVK{Group: group, Kind: d.Kind, Version: d.Version})
	}
	for _, d := range csv.Spec.APIServiceDefinitions.Required {
		add(catalog.PropertyGVKRequired, catalog.GVK{Group: d.Group, Kind: d.Kind, Version: d.Version})
	}
	if pkg, ok := inferPackage(csv, subs); ok {
		version := ""
		if v, err := csv.Spec.Version.Semver(); err == nil && csv.Spec.Version != "" {
			version = v.String()
		}
		add(catalog.PropertyPackage, catalog.PackageProperty{PackageName: pkg, Version: version})
	}
	return props, nil
}

// inferPackage is the package of the Subscriptions whose installedCSV names the CSV, when
// they agree on exactly one.
func inferPackage(csv *v1alpha1.ClusterServiceVersion, subs []v1alpha1.Subscription) (string, bool) {
	pkg := ""
	for i := range subs {
		if subs[i].Status.InstalledCSV != csv.Name || subs[i].Spec.Package == "" {
			continue
		}
		if pkg != "" && pkg != subs[i].Spec.Package {
			return "", false
		}
		pkg = subs[i].Spec.Package
	}
	return pkg, pkg != ""
}

// PropertiesAnnotationValue is the value of the PropertiesAnnotation for a bundle's
// properties: every property but olm.bundle.object and olm.csv.metadata, which OLM strips
// before projecting them onto the CSV.
func PropertiesAnnotationValue(props []catalog.Property) (string, error) {
	kept := servedProperties(props)
	if kept == nil {
		kept = []catalog.Property{}
	}
	data, err := json.Marshal(struct {
		Properties []catalog.Property `json:"properties"`
	}{kept})
	if err != nil {
		return "", fmt.Errorf("encode properties annotation: %w", err)
	}
	return string(data), nil
}

// servedProperties are a bundle's properties as OLM's registry serves them: without
// olm.bundle.object and olm.csv.metadata, which operator-registry's conversion to its API
// leaves out (inlined manifests would at least double a CSV's size in the properties
// annotation). OLM's resolver, its constraints included, reads only these.
func servedProperties(props []catalog.Property) []catalog.Property {
	unserved := func(p catalog.Property) bool {
		return p.Type == catalog.PropertyBundleObject || p.Type == catalog.PropertyCSVMetadata
	}
	if !slices.ContainsFunc(props, unserved) {
		return props
	}
	return slices.DeleteFunc(slices.Clone(props), unserved)
}

// PackageOfCSV is the package a CSV was installed from, as its properties annotation
// records it (OLM's and olmsync's InstallPlans write it); false when it records none.
func PackageOfCSV(csv *v1alpha1.ClusterServiceVersion) (string, bool) {
	anno, ok := csv.Annotations[PropertiesAnnotation]
	if !ok {
		return "", false
	}
	var doc struct {
		Properties []catalog.Property `json:"properties"`
	}
	if json.Unmarshal([]byte(anno), &doc) != nil {
		return "", false
	}
	bp, _ := catalog.ParseProperties(doc.Properties)
	pp, ok := bp.Package()
	if !ok || pp.PackageName == "" {
		return "", false
	}
	return pp.PackageName, true
}
