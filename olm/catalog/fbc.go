package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/olmsync/olmsync/internal/safeyaml"
)

// The FBC schemas this package models.
const (
	SchemaPackage      = "olm.package"
	SchemaChannel      = "olm.channel"
	SchemaBundle       = "olm.bundle"
	SchemaDeprecations = "olm.deprecations"
)

// fbcReader gathers the objects of an FBC, file after file, into packages.
type fbcReader struct {
	problems
	packages map[string]*Package
	declared map[string]bool // packages an olm.package object declares
	order    []string        // package names in the order they were first seen
	others   []Meta
}

func newFBCReader() *fbcReader {
	return &fbcReader{packages: map[string]*Package{}, declared: map[string]bool{}}
}

// LoadFBC reads a file-based catalog from fsys: root is one file, or a directory whose
// .json, .yaml and .yml files are read (hidden files and folders are skipped, as are
// files an .indexignore names). A file that stops parsing loses only what follows the
// bad line; everything read is kept and every defect becomes a Problem.
func LoadFBC(fsys fs.FS, root string) (*Catalog, error) {
	return loadFBC(fsys, root, "")
}

func loadFBC(fsys fs.FS, root, display string) (*Catalog, error) {
	r := newFBCReader()
	files, err := catalogFiles(fsys, root)
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		f, err := fsys.Open(file)
		if err != nil {
			r.add(SeverityError, CodeParse, Origin{File: displayPath(display, file)}, "", "", "", "%v", err)
			continue
		}
		r.readFile(f, file, displayPath(display, file))
		_ = f.Close()
	}
	return r.catalog(Source{Format: FormatFBC, Ref: displayPath(display, root)}), nil
}

// ReadFBC reads one FBC stream (JSON values or YAML documents, by the name's extension;
// JSON when the name has no YAML extension).
func ReadFBC(rd io.Reader, name string) *Catalog {
	r := newFBCReader()
	r.readFile(rd, name, name)
	return r.catalog(Source{Format: FormatFBC, Ref: name})
}

func displayPath(display, file string) string {
	if display == "" {
		return file
	}
	if file == "." {
		return display
	}
	return path.Join(display, file)
}

// catalogFiles lists the files of an FBC below root, in lexical order.
func catalogFiles(fsys fs.FS, root string) ([]string, error) {
	info, err := fs.Stat(fsys, root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{root}, nil
	}
	ignore := &indexIgnore{}
	var files []string
	err = fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return ignore.load(fsys, p)
		}
		if isManifestFile(d.Name()) && !ignore.match(p) {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// indexIgnore holds the patterns of the .indexignore files met so far (opm's convention):
// a pattern matches a path relative to the folder of its file, or the file's base name.
type indexIgnore struct {
	rules []struct{ dir, pattern string }
}

func (ig *indexIgnore) load(fsys fs.FS, dir string) error {
	data, err := fs.ReadFile(fsys, path.Join(dir, ".indexignore"))
	if err != nil {
		return nil //nolint:nilerr // no .indexignore in this folder
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			ig.rules = append(ig.rules, struct{ dir, pattern string }{dir, strings.TrimPrefix(line, "/")})
		}
	}
	return nil
}

func (ig *indexIgnore) match(file string) bool {
	for _, r := range ig.rules {
		rel := strings.TrimPrefix(file, r.dir+"/")
		if r.dir == "." {
			rel = file
		}
		if ok, _ := path.Match(r.pattern, rel); ok {
			return true
		}
		if ok, _ := path.Match(r.pattern, path.Base(file)); ok {
			return true
		}
	}
	return false
}

func (r *fbcReader) readFile(rd io.Reader, name, display string) {
	read := readJSONStream
	if ext := path.Ext(name); ext == ".yaml" || ext == ".yml" {
		read = readYAMLStream
	}
	err := read(rd, func(data []byte, line int) error {
		r.readObject(data, Origin{File: display, Line: line})
		return nil
	})
	if err != nil {
		o := Origin{File: display}
		var se *StreamError
		if errors.As(err, &se) {
			o.Line = se.Line
			err = se.Err
		}
		r.add(SeverityError, CodeParse, o, "", "", "", "%v (the rest of the file is not read)", err)
	}
}

// fbcObject is every field of the four schemas this package models, so that one decode
// reads any of them (the catalog is large; decoding each object twice doubles the load).
type fbcObject struct {
	Schema         string         `json:"schema"`
	Package        string         `json:"package"`
	Name           string         `json:"name"`
	DefaultChannel string         `json:"defaultChannel"`
	Icon           *Icon          `json:"icon"`
	Description    string         `json:"description"`
	Image          string         `json:"image"`
	Properties     []Property     `json:"properties"`
	RelatedImages  []RelatedImage `json:"relatedImages"`
	// Entries are channel entries or deprecation entries, by schema.
	Entries json.RawMessage `json:"entries"`
}

// readObject reads one FBC object. An object that does not decode is a problem of the
// package it names, so it does not hide the other packages.
func (r *fbcReader) readObject(data []byte, o Origin) {
	var in fbcObject
	if err := json.Unmarshal(data, &in); err != nil {
		r.add(SeverityError, CodeParse, o, objectPackage(data), "", "", "not an FBC object: %v", err)
		return
	}
	var err error
	switch in.Schema {
	case SchemaPackage:
		r.readPackage(&in, o)
	case SchemaChannel:
		err = r.readChannel(&in, o)
	case SchemaBundle:
		r.readBundle(&in, o)
	case SchemaDeprecations:
		err = r.readDeprecations(&in, o)
	case "":
		r.add(SeverityError, CodeParse, o, in.Package, "", "", "object %q has no schema", in.Name)
		return
	default:
		r.others = append(r.others, Meta{Schema: in.Schema, Package: in.Package, Name: in.Name, JSON: data, Origin: o})
	}
	if err != nil {
		pkg := in.Package
		if in.Schema == SchemaPackage {
			pkg = in.Name
		}
		r.add(SeverityError, CodeParse, o, pkg, "", "", "%s %q: %v", in.Schema, in.Name, err)
	}
}

// objectPackage finds, as best it can, the package an undecodable object belongs to.
func objectPackage(data []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	var schema, pkg, name string
	_ = json.Unmarshal(m["schema"], &schema)
	_ = json.Unmarshal(m["package"], &pkg)
	_ = json.Unmarshal(m["name"], &name)
	if schema == SchemaPackage {
		return name
	}
	return pkg
}

// pkg returns the package of that name, creating it (undeclared) on first sight.
func (r *fbcReader) pkg(name string) *Package {
	p, ok := r.packages[name]
	if !ok {
		p = &Package{Name: name}
		r.packages[name] = p
		r.order = append(r.order, name)
	}
	return p
}

func (r *fbcReader) readPackage(in *fbcObject, o Origin) {
	p := r.pkg(in.Name)
	if r.declared[in.Name] {
		r.add(SeverityError, CodeDuplicatePackage, o, in.Name, "", "", "duplicate package (also declared at %s)", p.Origin)
		return
	}
	r.declared[in.Name] = true
	p.DefaultChannel, p.Icon, p.Description, p.Properties, p.Origin = in.DefaultChannel, in.Icon, in.Description, in.Properties, o
}

func (r *fbcReader) readChannel(in *fbcObject, o Origin) error {
	var entries []ChannelEntry
	if len(in.Entries) > 0 {
		if err := json.Unmarshal(in.Entries, &entries); err != nil {
			return err
		}
	}
	for i := range entries {
		entries[i].Origin = o
	}
	p := r.pkg(in.Package)
	p.Channels = append(p.Channels, &Channel{Package: in.Package, Name: in.Name, Entries: entries, Properties: in.Properties, Origin: o})
	return nil
}

func (r *fbcReader) readBundle(in *fbcObject, o Origin) {
	b := &Bundle{Name: in.Name, Package: in.Package, Image: in.Image, Properties: in.Properties, RelatedImages: in.RelatedImages, Origin: o}
	b.parseProperties()
	r.unpackObjects(b)
	p := r.pkg(in.Package)
	p.Bundles = append(p.Bundles, b)
}

// unpackObjects decodes a bundle's olm.bundle.object properties into its CSV and objects,
// and drops the parsed properties' bytes of them, which nothing reads after this: the CSV's
// would be held twice over.
func (r *fbcReader) unpackObjects(b *Bundle) {
	if b.props == nil {
		return
	}
	objects := b.props.Objects
	b.props.Objects = nil
	for i, data := range objects {
		m, err := newManifest(manifestJSON(data), b.Origin)
		if err != nil {
			r.add(SeverityError, CodeBadProperty, b.Origin, b.Package, "", b.Name, "olm.bundle.object %d: %v", i, err)
			continue
		}
		if !m.isCSV() {
			b.Objects = append(b.Objects, m)
			continue
		}
		csv, unknown, err := decodeCSV(m)
		if err != nil {
			r.add(SeverityError, CodeBadProperty, b.Origin, b.Package, "", b.Name, "olm.bundle.object %d: decode ClusterServiceVersion: %v", i, err)
			continue
		}
		for _, f := range unknown {
			r.add(SeverityWarning, CodeUnknownField, b.Origin, b.Package, "", b.Name, "ClusterServiceVersion %s: %s", csv.Name, f)
		}
		b.CSV = csv
	}
}

// manifestJSON turns an olm.bundle.object manifest (JSON, or YAML from older tools) into
// JSON. JSON that the YAML reader would turn into the same JSON is kept as it is
// (safeyaml.JSONObject): converting them was half the time a catalog of 3,000 bundles
// with their objects took to load.
func manifestJSON(data []byte) []byte {
	if safeyaml.JSONObject(data) {
		return data
	}
	var out []byte
	_ = readYAMLStream(bytes.NewReader(data), func(doc []byte, _ int) error {
		if out == nil {
			out = doc
		}
		return nil
	})
	if out == nil {
		return data
	}
	return out
}

func (r *fbcReader) readDeprecations(in *fbcObject, o Origin) error {
	var entries []Deprecation
	if len(in.Entries) > 0 {
		if err := json.Unmarshal(in.Entries, &entries); err != nil {
			return err
		}
	}
	for i := range entries {
		entries[i].Origin = o
	}
	p := r.pkg(in.Package)
	p.Deprecations = append(p.Deprecations, entries...)
	return nil
}

// catalog finishes the read: every package a channel or bundle names but no olm.package
// declares is reported, and kept, so that nothing read is lost.
func (r *fbcReader) catalog(src Source) *Catalog {
	c := &Catalog{Source: src, Others: r.others}
	for _, name := range r.order {
		p := r.packages[name]
		if !r.declared[name] {
			first := firstOrigin(p)
			p.Origin = first
			r.add(SeverityError, CodeUnknownPackage, first, name, "", "", "unknown package %q: no olm.package object declares it", name)
		}
		c.Packages = append(c.Packages, p)
	}
	c.Problems = r.list
	c.Sort()
	return c
}

func firstOrigin(p *Package) Origin {
	if len(p.Channels) > 0 {
		return p.Channels[0].Origin
	}
	if len(p.Bundles) > 0 {
		return p.Bundles[0].Origin
	}
	if len(p.Deprecations) > 0 {
		return p.Deprecations[0].Origin
	}
	return Origin{}
}
