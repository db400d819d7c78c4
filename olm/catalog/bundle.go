package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/safeyaml"
	"github.com/olmsync/olmsync/olm/semverrange"
)

// The annotations of a bundle's metadata/annotations.yaml.
const (
	AnnotationMediaType      = "operators.operatorframework.io.bundle.mediatype.v1"
	AnnotationManifests      = "operators.operatorframework.io.bundle.manifests.v1"
	AnnotationMetadata       = "operators.operatorframework.io.bundle.metadata.v1"
	AnnotationPackage        = "operators.operatorframework.io.bundle.package.v1"
	AnnotationChannels       = "operators.operatorframework.io.bundle.channels.v1"
	AnnotationDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"

	// MediaTypeRegistryV1 is the only bundle format OLM installs: a CSV and its objects.
	MediaTypeRegistryV1 = "registry+v1"
)

// BundleAnnotations is what a bundle's metadata/annotations.yaml says about it.
type BundleAnnotations struct {
	MediaType      string
	Manifests      string
	Metadata       string
	Package        string
	Channels       []string
	DefaultChannel string
}

// ParseBundleAnnotations reads a metadata/annotations.yaml. Values that YAML types as
// something other than a string (an unquoted true, a number) are read as their text, as
// the annotations are labels of an image.
func ParseBundleAnnotations(data []byte) (BundleAnnotations, error) {
	var doc struct {
		Annotations map[string]any `json:"annotations"`
	}
	if err := safeyaml.Check("", data); err != nil {
		return BundleAnnotations{}, err
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return BundleAnnotations{}, err
	}
	if doc.Annotations == nil {
		return BundleAnnotations{}, errors.New(`no "annotations" map`)
	}
	get := func(key string) string {
		switch v := doc.Annotations[key].(type) {
		case nil:
			return ""
		case string:
			return strings.TrimSpace(v)
		default:
			return fmt.Sprint(v)
		}
	}
	a := BundleAnnotations{
		MediaType:      get(AnnotationMediaType),
		Manifests:      get(AnnotationManifests),
		Metadata:       get(AnnotationMetadata),
		Package:        get(AnnotationPackage),
		DefaultChannel: get(AnnotationDefaultChannel),
	}
	for ch := range strings.SplitSeq(get(AnnotationChannels), ",") {
		if ch = strings.TrimSpace(ch); ch != "" {
			a.Channels = append(a.Channels, ch)
		}
	}
	return a, nil
}

// Dependency is one entry of a bundle's metadata/dependencies.yaml.
type Dependency struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// ParseDependencies reads a metadata/dependencies.yaml and turns each dependency into the
// property OLM resolves it by (operator-registry's legacy translation): olm.package
// {packageName, version} becomes olm.package.required {packageName, versionRange}; olm.gvk
// becomes olm.gvk.required; olm.label becomes olm.label.required; olm.constraint is kept.
// A version range that blang/semver cannot parse is an error here, not at resolution.
func ParseDependencies(data []byte) ([]Property, error) {
	var doc struct {
		Dependencies []Dependency `json:"dependencies"`
	}
	if err := safeyaml.Check("", data); err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, err
	}
	var out []Property
	var errs []error
	for i, d := range doc.Dependencies {
		p, err := dependencyProperty(d)
		if err != nil {
			errs = append(errs, fmt.Errorf("dependency %d (%s): %w", i, d.Type, err))
			continue
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

func dependencyProperty(d Dependency) (Property, error) {
	switch d.Type {
	case "olm.package":
		var v struct {
			PackageName string `json:"packageName"`
			Version     string `json:"version"`
		}
		if err := decodeValue(d.Value, &v); err != nil {
			return Property{}, err
		}
		if v.PackageName == "" {
			return Property{}, errors.New("packageName must be set")
		}
		if _, err := semverrange.Parse(v.Version); err != nil {
			return Property{}, fmt.Errorf("version range %q: %w", v.Version, err)
		}
		return NewProperty(PropertyPackageRequired, PackageRequirement{PackageName: v.PackageName, VersionRange: v.Version})
	case "olm.gvk":
		var v GVK
		if err := decodeValue(d.Value, &v); err != nil {
			return Property{}, err
		}
		if v.Group == "" && v.Kind == "" && v.Version == "" {
			return Property{}, errors.New("group, kind and version must be set")
		}
		return NewProperty(PropertyGVKRequired, v)
	case "olm.label":
		var v struct {
			Label string `json:"label"`
		}
		if err := decodeValue(d.Value, &v); err != nil {
			return Property{}, err
		}
		return NewProperty(PropertyLabelRequired, v)
	case PropertyConstraint:
		var c Constraint
		if err := decodeValue(d.Value, &c); err != nil {
			return Property{}, err
		}
		if err := c.validate(); err != nil {
			return Property{}, err
		}
		return Property{Type: PropertyConstraint, Value: d.Value}, nil
	}
	return Property{}, fmt.Errorf("unknown dependency type %q", d.Type)
}

// ParsePropertiesFile reads a metadata/properties.yaml: {properties: [{type, value}]}.
func ParsePropertiesFile(data []byte) ([]Property, error) {
	var doc map[string]json.RawMessage
	if err := safeyaml.Check("", data); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	raw, ok := doc["properties"]
	if !ok {
		keys := make([]string, 0, len(doc))
		for k := range doc {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, fmt.Errorf(`no "properties" key (keys: %s)`, strings.Join(keys, ", "))
	}
	var props []Property
	if err := json.Unmarshal(raw, &props); err != nil {
		return nil, err
	}
	for i, p := range props {
		if p.Type == "" {
			return nil, fmt.Errorf("property %d has no type", i)
		}
	}
	return props, nil
}

// bundleDir is one bundle directory read: its bundle, and where its annotations place it.
type bundleDir struct {
	Bundle      *Bundle
	Annotations BundleAnnotations
	// AnnotationsFile is where the bundle names its package and channels; channel and
	// package problems point there.
	AnnotationsFile Origin
	Entry           ChannelEntry
}

// readBundleDir reads the bundle directory dir of fsys: metadata/annotations.yaml, the
// manifests folder it names (manifests/ by default; the bundle folder itself when there is
// none), and the optional metadata/dependencies.yaml and metadata/properties.yaml. It
// returns nil when no bundle can be made (no annotations, no CSV); the reason is a problem.
func readBundleDir(fsys fs.FS, dir, display string, v *problems) *bundleDir {
	ann, annOrigin, ok := readAnnotations(fsys, dir, display, v)
	if !ok {
		return nil
	}
	pkg := ann.Package
	manifestsDir, ok := manifestsFolder(fsys, dir, ann, annOrigin, v)
	if !ok {
		return nil
	}
	content, err := readBundleManifests(fsys, manifestsDir, display, v, pkg, "")
	if err != nil {
		v.add(SeverityError, CodeParse, Origin{File: displayPath(display, manifestsDir)}, pkg, "", "", "read manifests: %v", err)
		return nil
	}
	if len(content.CSVs) != 1 {
		v.add(SeverityError, CodeCSVCount, Origin{File: displayPath(display, manifestsDir)}, pkg, "", "", "bundle must contain exactly one ClusterServiceVersion, found %d", len(content.CSVs))
		if len(content.CSVs) == 0 {
			return nil
		}
	}
	csv := content.CSVs[0]
	extra := readBundleMetadata(fsys, dir, display, pkg, csv.Name, v)
	b := bundleFromCSV(pkg, csv, content.Objects, extra, content.CSVFile)
	checkOwnedCRDs(v, b, "owned CRD is not in the bundle")
	if len(ann.Channels) == 0 {
		v.add(SeverityError, CodeBundleMetadata, annOrigin, pkg, "", b.Name, "bundle has no channel: annotation %s is empty", AnnotationChannels)
	}
	return &bundleDir{Bundle: b, Annotations: ann, AnnotationsFile: annOrigin, Entry: entryFromCSV(csv, content.CSVFile)}
}

// readAnnotations reads a bundle's metadata/annotations.yaml, which must name the package
// and, if it names one, the registry+v1 media type.
func readAnnotations(fsys fs.FS, dir, display string, v *problems) (BundleAnnotations, Origin, bool) {
	file := path.Join(dir, "metadata", "annotations.yaml")
	o := Origin{File: displayPath(display, file)}
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		v.add(SeverityError, CodeBundleMetadata, o, "", "", "", "not a bundle: %v", err)
		return BundleAnnotations{}, o, false
	}
	ann, err := ParseBundleAnnotations(data)
	if err != nil {
		v.add(SeverityError, CodeBundleMetadata, o, "", "", "", "read bundle annotations: %v", err)
		return ann, o, false
	}
	if ann.Package == "" {
		v.add(SeverityError, CodeBundleMetadata, o, "", "", "", "annotation %s is not set", AnnotationPackage)
		return ann, o, false
	}
	if ann.MediaType != "" && ann.MediaType != MediaTypeRegistryV1 {
		v.add(SeverityError, CodeBundleMetadata, o, ann.Package, "", "", "bundle media type %q is not %q", ann.MediaType, MediaTypeRegistryV1)
	}
	return ann, o, true
}

// manifestsFolder is the bundle's manifests folder: the one the annotations name, which
// must be inside the bundle, or the bundle folder itself when that one does not exist.
func manifestsFolder(fsys fs.FS, dir string, ann BundleAnnotations, annOrigin Origin, v *problems) (string, bool) {
	rel := path.Clean(strings.TrimSuffix(defaultString(ann.Manifests, "manifests/"), "/"))
	if !fs.ValidPath(rel) || rel == "." {
		v.add(SeverityError, CodeBundleMetadata, annOrigin, ann.Package, "", "", "annotation %s %q does not name a folder inside the bundle", AnnotationManifests, ann.Manifests)
		return "", false
	}
	folder := path.Join(dir, rel)
	if _, err := fs.Stat(fsys, folder); err != nil {
		return dir, true // some bundles keep their manifests in the bundle folder itself
	}
	return folder, true
}

// readBundleMetadata reads the optional dependencies.yaml and properties.yaml of a bundle.
// A file that cannot be used contributes nothing and is reported.
func readBundleMetadata(fsys fs.FS, dir, display, pkg, bundle string, v *problems) []Property {
	var out []Property
	for _, f := range []struct {
		name  string
		parse func([]byte) ([]Property, error)
	}{
		{"dependencies.yaml", ParseDependencies},
		{"properties.yaml", ParsePropertiesFile},
	} {
		file := path.Join(dir, "metadata", f.name)
		data, err := fs.ReadFile(fsys, file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			var props []Property
			props, err = f.parse(data)
			out = append(out, props...)
		}
		if err != nil {
			v.add(SeverityError, CodeBundleMetadata, Origin{File: displayPath(display, file)}, pkg, "", bundle, "metadata/%s: %v", f.name, err)
		}
	}
	return out
}

func defaultString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// LoadBundles reads a bundle directory, or a folder holding bundle directories at any
// depth (operators/<package>/<version>/ as community-operators keeps them), as a catalog.
// Each bundle joins every channel its annotations name, with its CSV's replaces, skips and
// olm.skipRange as the entry's edges. A package's default channel is the one named by its
// highest-versioned bundle that names one, or its only channel.
func LoadBundles(fsys fs.FS, root string) (*Catalog, error) {
	return loadBundles(fsys, root, "")
}

func loadBundles(fsys fs.FS, root, display string) (*Catalog, error) {
	dirs, err := findBundleDirs(fsys, root)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no bundle directory (a folder with metadata/annotations.yaml) found", displayPath(display, root))
	}
	v := &problems{}
	var read []*bundleDir
	for _, dir := range dirs {
		if bd := readBundleDir(fsys, dir, display, v); bd != nil {
			read = append(read, bd)
		}
	}
	c := &Catalog{Source: Source{Format: FormatBundles, Ref: displayPath(display, root)}}
	c.Packages = packagesFromBundles(read)
	c.Problems = v.list
	c.Sort()
	return c, nil
}

// findBundleDirs lists, in lexical order, every folder below root (root included) that
// holds metadata/annotations.yaml. A bundle's own subfolders are not searched.
func findBundleDirs(fsys fs.FS, root string) ([]string, error) {
	var dirs []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if _, err := fs.Stat(fsys, path.Join(p, "metadata", "annotations.yaml")); err == nil {
			dirs = append(dirs, p)
			return fs.SkipDir
		}
		return nil
	})
	return dirs, err
}

// packagesFromBundles groups bundles into packages and builds their channels.
func packagesFromBundles(dirs []*bundleDir) []*Package {
	byPkg := map[string][]*bundleDir{}
	var names []string
	for _, bd := range dirs {
		pkg := bd.Bundle.Package
		if _, ok := byPkg[pkg]; !ok {
			names = append(names, pkg)
		}
		byPkg[pkg] = append(byPkg[pkg], bd)
	}
	var out []*Package
	for _, name := range names {
		out = append(out, packageFromBundles(name, byPkg[name]))
	}
	return out
}

func packageFromBundles(name string, dirs []*bundleDir) *Package {
	slices.SortStableFunc(dirs, func(a, b *bundleDir) int { return compareBundles(a.Bundle, b.Bundle) })
	p := &Package{Name: name, Origin: dirs[0].AnnotationsFile}
	channels := map[string]*Channel{}
	for _, bd := range dirs {
		p.Bundles = append(p.Bundles, bd.Bundle)
		for _, chName := range bd.Annotations.Channels {
			ch, ok := channels[chName]
			if !ok {
				ch = &Channel{Package: name, Name: chName, Origin: bd.AnnotationsFile}
				channels[chName] = ch
				p.Channels = append(p.Channels, ch)
			}
			ch.Entries = append(ch.Entries, bd.Entry)
		}
		// dirs are in version order, so the last bundle naming a default channel wins.
		if bd.Annotations.DefaultChannel != "" {
			p.DefaultChannel, p.Origin = bd.Annotations.DefaultChannel, bd.AnnotationsFile
		}
	}
	if p.DefaultChannel == "" && len(p.Channels) == 1 {
		p.DefaultChannel = p.Channels[0].Name
	}
	return p
}
