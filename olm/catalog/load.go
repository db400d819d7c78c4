package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// LoadOptions configure Load.
type LoadOptions struct {
	Image ImageOptions
}

// Load reads a catalog from src, which is one of:
//   - a path: an FBC file or folder, a package-manifest folder, a bundle directory or a
//     folder of them, or a ConfigMap manifest holding a catalog (see LoadPath);
//   - oci:DIR or oci:DIR:NAME, a catalog image in an OCI layout on disk;
//   - an image reference that names its registry (quay.io/org/catalog:tag,
//     localhost:5000/catalog@sha256:…); a bare docker.io/ name must say docker.io, so that
//     a mistyped path never turns into a pull.
//
// An error means src could not be read at all; a catalog with defects is returned with
// them in Problems (and Validate).
func Load(ctx context.Context, src string, opts LoadOptions) (*Catalog, error) {
	if _, err := os.Stat(src); err == nil {
		return LoadPath(src)
	}
	if dir, ok := strings.CutPrefix(src, "oci:"); ok {
		dir, refName := splitOCIRef(dir)
		return LoadOCILayout(dir, refName, opts.Image)
	}
	if looksLikeImage(src) {
		return LoadImage(ctx, src, opts.Image)
	}
	_, err := os.Stat(src)
	return nil, fmt.Errorf("read catalog %s: %w (and it is not an image reference naming its registry)", src, err)
}

// splitOCIRef splits DIR:NAME when DIR is a folder; otherwise the whole is the folder.
func splitOCIRef(s string) (dir, refName string) {
	if i := strings.LastIndex(s, ":"); i > 0 {
		if info, err := os.Stat(s[:i]); err == nil && info.IsDir() {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// looksLikeImage reports whether s names a registry host: its first path element has a
// dot or a port, or is localhost.
func looksLikeImage(s string) bool {
	host, rest, ok := strings.Cut(s, "/")
	if !ok || rest == "" || host == "" || strings.HasPrefix(host, ".") {
		return false
	}
	return strings.ContainsAny(host, ".:") || host == "localhost"
}

// LoadPath reads a catalog from a file or folder on disk, whatever its format (see
// DetectFormat). Origins name files as the path does.
func LoadPath(p string) (*Catalog, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	if info.IsDir() {
		return loadFS(os.DirFS(p), ".", p)
	}
	dir := filepath.Dir(p)
	return loadFS(os.DirFS(dir), filepath.Base(p), dir)
}

// LoadFS reads a catalog below root in fsys, whatever its format (see DetectFormat).
func LoadFS(fsys fs.FS, root string) (*Catalog, error) {
	return loadFS(fsys, root, "")
}

func loadFS(fsys fs.FS, root, display string) (*Catalog, error) {
	format, err := DetectFormat(fsys, root)
	if err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", displayPath(display, root), err)
	}
	switch format {
	case FormatBundles:
		return loadBundles(fsys, root, display)
	case FormatPackageManifest:
		if info, err := fs.Stat(fsys, root); err == nil && !info.IsDir() {
			root = path.Dir(root)
		}
		return loadPackageManifests(fsys, root, display)
	case FormatConfigMap:
		data, err := fs.ReadFile(fsys, root)
		if err != nil {
			return nil, err
		}
		return ReadConfigMap(data, displayPath(display, root))
	}
	c, err := loadFBC(fsys, root, display)
	if err != nil {
		return nil, err
	}
	if len(c.Packages) == 0 && len(c.Others) == 0 && len(c.Problems) == 0 {
		return nil, fmt.Errorf("read catalog %s: %w", displayPath(display, root), errNoCatalog)
	}
	return c, nil
}

var errNoCatalog = errors.New("no catalog found: no FBC objects, package manifest, bundle or ConfigMap")

// DetectFormat says which format is below root. A file is a package manifest
// (*.package.yaml), a ConfigMap catalog (its first object has kind ConfigMap) or an FBC.
// A folder is a bundle directory or folder of bundles when some folder in it holds
// metadata/annotations.yaml, a package-manifest folder when it holds a *.package.yaml,
// and an FBC otherwise; both bundles and package manifests is an error.
func DetectFormat(fsys fs.FS, root string) (Format, error) {
	info, err := fs.Stat(fsys, root)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return detectFileFormat(fsys, root)
	}
	bundles, err := findBundleDirs(fsys, root)
	if err != nil {
		return "", err
	}
	packages, err := findPackageFiles(fsys, root)
	if err != nil {
		return "", err
	}
	switch {
	case len(bundles) > 0 && len(packages) > 0:
		return "", fmt.Errorf("both bundle directories (%s) and package manifests (%s) are here; point at one of them", bundles[0], packages[0])
	case len(bundles) > 0:
		return FormatBundles, nil
	case len(packages) > 0:
		return FormatPackageManifest, nil
	}
	return FormatFBC, nil
}

func detectFileFormat(fsys fs.FS, file string) (Format, error) {
	if isPackageFile(path.Base(file)) {
		return FormatPackageManifest, nil
	}
	f, err := fsys.Open(file)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	read := readJSONStream
	if ext := path.Ext(file); ext == ".yaml" || ext == ".yml" {
		read = readYAMLStream
	}
	var kind string
	errFirst := errors.New("first object read")
	_ = read(f, func(data []byte, _ int) error {
		var tm struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(data, &tm) == nil {
			kind = tm.Kind
		}
		return errFirst
	})
	if kind == "ConfigMap" {
		return FormatConfigMap, nil
	}
	return FormatFBC, nil
}
