package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// RenderOptions says what WriteFBC writes besides the catalog's own objects.
type RenderOptions struct {
	// BundleObjects adds an olm.bundle.object property for the CSV and each object of every
	// bundle that carries them (what opm render writes for a bundle image). A bundle with no
	// image always gets them, so that the output stays a valid FBC.
	BundleObjects bool
}

type renderPackage struct {
	Schema         string     `json:"schema"`
	Name           string     `json:"name"`
	DefaultChannel string     `json:"defaultChannel,omitempty"`
	Icon           *Icon      `json:"icon,omitempty"`
	Description    string     `json:"description,omitempty"`
	Properties     []Property `json:"properties,omitempty"`
}

type renderChannel struct {
	Schema     string         `json:"schema"`
	Package    string         `json:"package"`
	Name       string         `json:"name"`
	Entries    []ChannelEntry `json:"entries"`
	Properties []Property     `json:"properties,omitempty"`
}

type renderBundle struct {
	Schema        string         `json:"schema"`
	Name          string         `json:"name"`
	Package       string         `json:"package"`
	Image         string         `json:"image"`
	Properties    []Property     `json:"properties"`
	RelatedImages []RelatedImage `json:"relatedImages,omitempty"`
}

type renderDeprecations struct {
	Schema  string        `json:"schema"`
	Package string        `json:"package"`
	Entries []Deprecation `json:"entries"`
}

// WriteFBC writes the catalog as a file-based catalog, like opm render: one JSON object per
// line; per package (by name) its olm.package, its olm.channel objects (by name), its
// olm.bundle objects (by version) and its olm.deprecations; then the objects of schemas
// this package does not model, as they were read.
func WriteFBC(w io.Writer, c *Catalog, opts RenderOptions) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, p := range c.Packages {
		if err := writePackage(enc, p, opts); err != nil {
			return fmt.Errorf("render package %q: %w", p.Name, err)
		}
	}
	for _, m := range c.Others {
		var buf bytes.Buffer
		if err := json.Compact(&buf, m.JSON); err != nil {
			return fmt.Errorf("render %s %q: %w", m.Schema, m.Name, err)
		}
		buf.WriteByte('\n')
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func writePackage(enc *json.Encoder, p *Package, opts RenderOptions) error {
	if err := enc.Encode(renderPackage{Schema: SchemaPackage, Name: p.Name, DefaultChannel: p.DefaultChannel, Icon: p.Icon, Description: p.Description, Properties: p.Properties}); err != nil {
		return err
	}
	for _, ch := range p.Channels {
		entries := ch.Entries
		if entries == nil {
			entries = []ChannelEntry{}
		}
		if err := enc.Encode(renderChannel{Schema: SchemaChannel, Package: p.Name, Name: ch.Name, Entries: entries, Properties: ch.Properties}); err != nil {
			return err
		}
	}
	for _, b := range p.Bundles {
		props, err := renderProperties(b, opts)
		if err != nil {
			return fmt.Errorf("bundle %q: %w", b.Name, err)
		}
		if err := enc.Encode(renderBundle{Schema: SchemaBundle, Name: b.Name, Package: p.Name, Image: b.Image, Properties: props, RelatedImages: b.RelatedImages}); err != nil {
			return err
		}
	}
	if len(p.Deprecations) > 0 {
		return enc.Encode(renderDeprecations{Schema: SchemaDeprecations, Package: p.Name, Entries: p.Deprecations})
	}
	return nil
}

// renderProperties is a bundle's properties plus, when wanted, one olm.bundle.object per
// manifest: the CSV first, then the objects in bundle order.
func renderProperties(b *Bundle, opts RenderOptions) ([]Property, error) {
	props := b.Properties
	if props == nil {
		props = []Property{}
	}
	hasObjects := slices.ContainsFunc(props, func(p Property) bool { return p.Type == PropertyBundleObject })
	if hasObjects || !opts.BundleObjects && b.Image != "" {
		return props, nil
	}
	props = slices.Clone(props)
	if b.CSV != nil {
		data, err := json.Marshal(b.CSV)
		if err != nil {
			return nil, err
		}
		props = append(props, bundleObjectProperty(data))
	}
	for _, o := range b.Objects {
		props = append(props, bundleObjectProperty(o.JSON))
	}
	return props, nil
}
