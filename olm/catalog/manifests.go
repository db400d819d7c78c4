package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/olmsync/olmsync/api/operators"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

func (o Object) isCSV() bool {
	return o.Kind == operatorsv1alpha1.ClusterServiceVersionKind && strings.HasPrefix(o.APIVersion, operators.GroupName+"/")
}

func (o Object) isCRD() bool {
	return o.Kind == "CustomResourceDefinition" && strings.HasPrefix(o.APIVersion, "apiextensions.k8s.io/")
}

// parseManifests reads the objects of one manifest file (YAML documents or JSON values).
// An error is a *StreamError naming the line; the objects before it are returned.
func parseManifests(data []byte, file string) ([]Object, error) {
	var out []Object
	read := readYAMLStream
	if strings.HasSuffix(file, ".json") {
		read = readJSONStream
	}
	err := read(bytes.NewReader(data), func(doc []byte, line int) error {
		m, err := newManifest(doc, Origin{File: file, Line: line})
		if err != nil {
			return &StreamError{Line: line, Err: err}
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// newManifest reads the type and name of one manifest.
func newManifest(doc []byte, o Origin) (Object, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if len(doc) == 0 || doc[0] != '{' {
		return Object{}, fmt.Errorf("not a Kubernetes object: %.40s", doc)
	}
	if err := json.Unmarshal(doc, &tm); err != nil {
		return Object{}, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	if tm.Kind == "" || tm.APIVersion == "" {
		return Object{}, errors.New("not a Kubernetes object: apiVersion and kind must be set")
	}
	return Object{APIVersion: tm.APIVersion, Kind: tm.Kind, Name: tm.Metadata.Name, JSON: doc, Origin: o}, nil
}

// decodeCSV decodes a CSV manifest with the project's types. Fields the types do not know
// come back as warnings: OLM reads such CSVs, so they are not errors of the catalog.
func decodeCSV(m Object) (*operatorsv1alpha1.ClusterServiceVersion, []string, error) {
	d, err := operators.Decode(m.JSON)
	if err != nil {
		return nil, nil, err
	}
	csv, ok := d.Object.(*operatorsv1alpha1.ClusterServiceVersion)
	if !ok {
		return nil, nil, fmt.Errorf("%s is not a ClusterServiceVersion", d.GVK)
	}
	return csv, d.UnknownFields, nil
}

// crdInfo is what a catalog needs to know of a CRD: its name and the GVKs it serves.
type crdInfo struct {
	Name     string
	Group    string
	Kind     string
	Plural   string
	Versions []string
	// ListedVersions are spec.versions' names alone (spec.version is not among them).
	ListedVersions []string
}

// parseCRD reads a v1 or v1beta1 CRD. For v1beta1 the single spec.version counts along
// with spec.versions, as opm does when it derives a bundle's provided APIs.
func parseCRD(data []byte) (crdInfo, error) {
	var crd struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Group   string `json:"group"`
			Version string `json:"version"`
			Names   struct {
				Kind   string `json:"kind"`
				Plural string `json:"plural"`
			} `json:"names"`
			Versions []struct {
				Name string `json:"name"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &crd); err != nil {
		return crdInfo{}, err
	}
	info := crdInfo{Name: crd.Metadata.Name, Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, Plural: crd.Spec.Names.Plural}
	for _, v := range crd.Spec.Versions {
		info.Versions = append(info.Versions, v.Name)
	}
	info.ListedVersions = slices.Clone(info.Versions)
	if crd.Spec.Version != "" && !slices.Contains(info.Versions, crd.Spec.Version) {
		info.Versions = append(info.Versions, crd.Spec.Version)
	}
	return info, nil
}

// bundleContent is what the manifests of one bundle (a bundle's manifests/ folder, a
// package manifest's version folder) amount to.
type bundleContent struct {
	CSVs    []*operatorsv1alpha1.ClusterServiceVersion
	CSVFile Origin
	Objects []Object
}

// readBundleManifests reads every manifest file directly in dir (not below it). Files
// that are not YAML or JSON are ignored, as opm ignores them.
// Origins name files as display says (see displayPath).
func readBundleManifests(fsys fs.FS, dir, display string, v *problems, pkg, bundle string) (bundleContent, error) {
	var content bundleContent
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return content, err
	}
	for _, e := range entries {
		if e.IsDir() || !isManifestFile(e.Name()) {
			continue
		}
		file := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return content, err
		}
		ms, err := parseManifests(data, displayPath(display, file))
		if err != nil {
			o := Origin{File: displayPath(display, file)}
			var se *StreamError
			if errors.As(err, &se) {
				o.Line, err = se.Line, se.Err
			}
			v.add(SeverityError, CodeParse, o, pkg, "", bundle, "%v", err)
		}
		for _, m := range ms {
			if !m.isCSV() {
				content.Objects = append(content.Objects, m)
				continue
			}
			csv, unknown, err := decodeCSV(m)
			if err != nil {
				v.add(SeverityError, CodeParse, m.Origin, pkg, "", bundle, "decode ClusterServiceVersion: %v", err)
				continue
			}
			for _, f := range unknown {
				v.add(SeverityWarning, CodeUnknownField, m.Origin, pkg, "", csv.Name, "ClusterServiceVersion %s: %s", csv.Name, f)
			}
			content.CSVs = append(content.CSVs, csv)
			content.CSVFile = m.Origin
		}
	}
	return content, nil
}

func isManifestFile(name string) bool {
	switch path.Ext(name) {
	case ".yaml", ".yml", ".json":
		return !strings.HasPrefix(name, ".")
	}
	return false
}

// checkOwnedCRDs reports every CRD the CSV owns that the bundle's objects do not define
// at the owned version (seeds 001: "If a CSV owns a CRD, that CRD must exist in the bundle").
func checkOwnedCRDs(v *problems, b *Bundle, message string) {
	if b.CSV == nil || message == "" {
		return
	}
	crds := map[string]crdInfo{}
	for _, o := range b.Objects {
		if o.Kind != "CustomResourceDefinition" {
			continue
		}
		if info, err := parseCRD(o.JSON); err == nil {
			crds[info.Name] = info
		}
	}
	for _, owned := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		info, ok := crds[owned.Name]
		if ok && slices.Contains(info.Versions, owned.Version) {
			continue
		}
		v.add(SeverityError, CodeOwnedCRDMissing, b.Origin, b.Package, "", b.Name, "%s: %s (version %s)", message, owned.Name, owned.Version)
	}
}

// providedAPIs are the olm.gvk properties opm derives for a bundle: every version of
// every CRD it carries, and every API service its CSV owns. Sorted and without repeats.
func providedAPIs(b *Bundle) []GVK {
	var out []GVK
	for _, o := range b.Objects {
		if o.Kind != "CustomResourceDefinition" {
			continue
		}
		info, err := parseCRD(o.JSON)
		if err != nil {
			continue
		}
		for _, version := range info.Versions {
			out = append(out, GVK{Group: info.Group, Kind: info.Kind, Version: version})
		}
	}
	if b.CSV != nil {
		for _, d := range b.CSV.Spec.APIServiceDefinitions.Owned {
			out = append(out, GVK{Group: d.Group, Kind: d.Kind, Version: d.Version})
		}
	}
	return sortGVKs(out)
}

// requiredAPIs are the olm.gvk.required properties of a CSV: its required CRDs (the group
// is the CRD name after its first dot) and its required API services.
func requiredAPIs(csv *operatorsv1alpha1.ClusterServiceVersion) []GVK {
	var out []GVK
	for _, d := range csv.Spec.CustomResourceDefinitions.Required {
		_, group, _ := strings.Cut(d.Name, ".")
		out = append(out, GVK{Group: group, Kind: d.Kind, Version: d.Version})
	}
	for _, d := range csv.Spec.APIServiceDefinitions.Required {
		out = append(out, GVK{Group: d.Group, Kind: d.Kind, Version: d.Version})
	}
	return out
}

func sortGVKs(gvks []GVK) []GVK {
	slices.SortFunc(gvks, func(a, b GVK) int {
		return strings.Compare(a.Group+"/"+a.Version+"/"+a.Kind, b.Group+"/"+b.Version+"/"+b.Kind)
	})
	return slices.Compact(gvks)
}
