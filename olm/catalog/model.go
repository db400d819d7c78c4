package catalog

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/blang/semver/v4"

	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// Format names the layout a catalog was read from.
type Format string

// The catalog formats this package reads.
const (
	// FormatFBC is a file-based catalog: olm.package, olm.channel, olm.bundle and
	// olm.deprecations objects in JSON or YAML files.
	FormatFBC Format = "fbc"
	// FormatPackageManifest is the legacy layout: <pkg>.package.yaml beside one folder
	// per version holding a CSV and its CRDs.
	FormatPackageManifest Format = "package-manifest"
	// FormatBundles is one bundle directory (manifests/ + metadata/annotations.yaml), or a
	// folder of them, read as a catalog.
	FormatBundles Format = "bundles"
	// FormatConfigMap is OLM's ConfigMap catalog (keys customResourceDefinitions,
	// clusterServiceVersions, packages).
	FormatConfigMap Format = "configmap"
	// FormatImage is a catalog image: an FBC under the image's configs label.
	FormatImage Format = "image"
)

// Source says where a catalog was read from.
type Source struct {
	Format Format `json:"format"`
	// Ref is the path or image reference the catalog was loaded from.
	Ref string `json:"ref"`
	// Digest is the image's manifest digest (images only): a catalog whose digest did not
	// change has not changed.
	Digest string `json:"digest,omitempty"`
	// Cached is true when an image catalog was read from the cache rather than pulled.
	Cached bool `json:"cached,omitempty"`
}

// Origin is where an object of a catalog was read: a file (relative to the source) and,
// where known, the 1-based line its object starts on.
type Origin struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// String is "file:line", "file", or "" when nothing is known.
func (o Origin) String() string {
	if o.Line > 0 {
		return fmt.Sprintf("%s:%d", o.File, o.Line)
	}
	return o.File
}

// Catalog is every package of one catalog source. Packages are sorted by name. A catalog
// with defects is still a catalog: Problems lists what was wrong while reading, and
// Validate adds what is wrong with the graph, each against its package, channel and bundle.
// Nothing in this package changes a catalog once it is loaded, so one catalog can be read
// by many goroutines; callers must treat it (and what Props returns) as read-only too.
type Catalog struct {
	Source   Source
	Packages []*Package
	// Others are FBC objects of schemas this package does not model (kept for render).
	Others []Meta
	// Problems are the defects found while reading (unparsable files and objects,
	// broken bundle metadata, package-manifest walk errors). Validate includes them.
	Problems Problems
}

// Meta is an FBC object of a schema this package does not model.
type Meta struct {
	Schema  string
	Package string
	Name    string
	JSON    []byte
	Origin  Origin
}

// Package is one operator package: its channels and its bundles.
type Package struct {
	Name           string
	DefaultChannel string
	Description    string
	Icon           *Icon
	Properties     []Property
	// Channels are sorted by name. A name given twice is kept twice (and reported).
	Channels []*Channel
	// Bundles are sorted by version, then name. A name given twice is kept twice (and reported).
	Bundles      []*Bundle
	Deprecations []Deprecation
	Origin       Origin
}

// Icon is a package's icon.
type Icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// Channel is one stream of updates of a package: its entries and their upgrade edges.
type Channel struct {
	Package    string
	Name       string
	Entries    []ChannelEntry
	Properties []Property
	Origin     Origin
}

// ChannelEntry is one bundle in a channel and the edges into it: the bundle it replaces,
// the bundles it skips, and the range of versions it replaces at once.
type ChannelEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
	// Origin is where the entry's edges are written: the olm.channel object of an FBC, the
	// CSV of a bundle directory or package manifest.
	Origin Origin `json:"-"`
}

// Bundle is one version of an operator.
type Bundle struct {
	Name    string
	Package string
	Image   string
	// Version is the olm.package property's version; zero when it does not parse (reported).
	Version semver.Version
	// Properties are the bundle's properties as the source gave them (for a bundle
	// directory, as opm derives them). Props gives a typed view.
	Properties    []Property
	RelatedImages []RelatedImage
	// CSV is the bundle's ClusterServiceVersion when the format carries it (bundle
	// directories, package manifests, ConfigMaps, FBC olm.bundle.object); nil otherwise.
	CSV *operatorsv1alpha1.ClusterServiceVersion
	// Objects are the bundle's other manifests (CRDs, Secrets, ConfigMaps, ...) when the
	// format carries them.
	Objects []Object
	Origin  Origin

	props    *BundleProperties // parsed once when read; Props parses when nil
	propsErr error
}

// RelatedImage is an image a bundle's operator uses.
type RelatedImage struct {
	Name  string `json:"name,omitempty"`
	Image string `json:"image"`
}

// Object is one manifest of a bundle other than its CSV, as JSON.
type Object struct {
	APIVersion string
	Kind       string
	Name       string
	JSON       []byte
	Origin     Origin
}

// Deprecation is one entry of an olm.deprecations object: what is deprecated and why.
type Deprecation struct {
	Reference DeprecationReference `json:"reference"`
	Message   string               `json:"message"`
	Origin    Origin               `json:"-"`
}

// DeprecationReference names a deprecated package (no name), channel or bundle.
type DeprecationReference struct {
	Schema string `json:"schema"`
	Name   string `json:"name,omitempty"`
}

// Package returns the named package, or nil. Packages must be sorted by name, as every
// loader leaves them (Sort sorts a catalog built by hand).
func (c *Catalog) Package(name string) *Package {
	i, ok := slices.BinarySearchFunc(c.Packages, name, func(p *Package, n string) int { return cmp.Compare(p.Name, n) })
	if !ok {
		return nil
	}
	return c.Packages[i]
}

// Channel returns the named channel (the first, when the name is given twice), or nil.
func (p *Package) Channel(name string) *Channel {
	for _, ch := range p.Channels {
		if ch.Name == name {
			return ch
		}
	}
	return nil
}

// Bundle returns the named bundle (the first, when the name is given twice), or nil.
func (p *Package) Bundle(name string) *Bundle {
	for _, b := range p.Bundles {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// Deprecated returns the message of the olm.deprecations entry for the package itself
// (schema olm.package, name empty), one of its channels (olm.channel) or bundles
// (olm.bundle), and whether there is one.
func (p *Package) Deprecated(schema, name string) (string, bool) {
	for _, d := range p.Deprecations {
		if d.Reference.Schema == schema && d.Reference.Name == name {
			return d.Message, true
		}
	}
	return "", false
}

// Entry returns the channel's entry for the named bundle, or nil.
func (c *Channel) Entry(name string) *ChannelEntry {
	for i := range c.Entries {
		if c.Entries[i].Name == name {
			return &c.Entries[i]
		}
	}
	return nil
}

// Sort puts packages (by name), channels (by name) and bundles (by version, then name) in
// the order the loaders leave them. The sort is stable, so a name given twice keeps the
// order in which it was read.
func (c *Catalog) Sort() {
	slices.SortStableFunc(c.Packages, func(a, b *Package) int { return cmp.Compare(a.Name, b.Name) })
	for _, p := range c.Packages {
		slices.SortStableFunc(p.Channels, func(a, b *Channel) int { return cmp.Compare(a.Name, b.Name) })
		slices.SortStableFunc(p.Bundles, compareBundles)
	}
}

func compareBundles(a, b *Bundle) int {
	if c := a.Version.Compare(b.Version); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}
