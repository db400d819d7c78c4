package catalog

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// FormatBundleImage is a bundle image: a bundle directory (manifests/ and metadata/) in
// the root of an image, as opm builds them and catalogs list them by `image`.
const FormatBundleImage Format = "bundle-image"

// The problem codes of bundles read on their own (an image, `olmsync bundle inspect`).
const (
	// CodeUnsupportedKind: a manifest of a kind a registry+v1 bundle may not carry.
	CodeUnsupportedKind Code = "UnsupportedKind"
	// CodeCatalogMismatch: a bundle image that is not the bundle the catalog says it is.
	CodeCatalogMismatch Code = "CatalogMismatch"
)

// DefaultMaxBundleSize bounds what is extracted from one bundle image (64 MiB; the largest
// community bundles hold about 1 MiB of manifests).
const DefaultMaxBundleSize = 64 << 20

// maxBundleFiles bounds the files extracted from one bundle image.
const maxBundleFiles = 10000

// The folders OLM takes from a bundle image (its unpack job copies exactly these two).
var bundleImageFolders = []string{"manifests", "metadata"}

// supportedKinds are the kinds a registry+v1 bundle may carry (operator-registry's
// pkg/lib/bundle supported_resources.go, which `opm alpha bundle validate` enforces).
var supportedKinds = []string{
	"ClusterServiceVersion", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
	"Service", "ServiceAccount", "Role", "RoleBinding", "PrometheusRule", "ServiceMonitor",
	"Secret", "ConfigMap", "PodDisruptionBudget", "PriorityClass", "VerticalPodAutoscaler",
	"ConsoleYAMLSample", "ConsoleQuickStart", "ConsoleCLIDownload", "ConsoleLink", "ConsolePlugin",
	"NetworkPolicy", "PodMonitor",
}

// UnpackedBundle is one bundle read from its image or its folder: what its
// metadata/annotations.yaml says, and the bundle — its CSV, its other manifests and the
// properties opm derives from them and from metadata/dependencies.yaml and
// metadata/properties.yaml.
type UnpackedBundle struct {
	// Source is where the bundle was read: FormatBundleImage with the reference and the
	// digest pulled (and whether it came from the cache), or FormatBundles and the folder.
	Source      Source
	Annotations BundleAnnotations
	// Bundle is nil when no bundle could be made (no annotations, no CSV).
	Bundle *Bundle
	// Problems are what was wrong with it; one of severity error makes it unusable.
	Problems Problems
}

// BundleError is a bundle that was read, but is not one OLM can install: no
// metadata/annotations.yaml, not exactly one CSV, a kind a bundle may not carry, another
// bundle than the catalog says. Pulling it again cannot help.
type BundleError struct {
	Ref string
	// Digest is the image's digest; empty for a folder.
	Digest   string
	Problems Problems
}

func (e *BundleError) Error() string {
	errs := e.Problems.Errors()
	what := "bundle " + e.Ref
	if e.Digest != "" && !strings.HasSuffix(e.Ref, "@"+e.Digest) {
		what += " (" + e.Digest + ")"
	}
	if len(errs) == 0 {
		return what + ": not a bundle"
	}
	// The first errors in full: the one that says why (a CSV that is a YAML bomb) may come
	// after the one that says what (no CSV found).
	const shown = 3
	var parts []string
	for _, e := range errs[:min(len(errs), shown)] {
		parts = append(parts, e.Error())
	}
	msg := what + ": " + strings.Join(parts, "; ")
	if len(errs) > shown {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-shown)
	}
	return msg
}

// LoadBundleImage pulls a bundle image and reads the bundle in it (its manifests/ and
// metadata/ folders, as OLM's unpack job copies them). The digest is resolved with the
// caller's credentials each time, so that content cached by digest is only ever read by
// someone who may pull it; the image itself is pulled only when the cache does not hold
// that digest. An *ImageError says the image could not be resolved, pulled or extracted
// (try again later); a *BundleError that it is no bundle OLM can install (do not).
func LoadBundleImage(ctx context.Context, ref string, opts ImageOptions) (*UnpackedBundle, error) {
	desc, err := opts.get(ctx, ref)
	if err != nil {
		return nil, err
	}
	src := Source{Format: FormatBundleImage, Ref: ref, Digest: desc.Digest.String()}
	key := "bundle-" + cacheKey(desc.Digest, desc.MediaType.IsIndex(), opts.Platform)
	maxSize := opts.MaxSize
	if maxSize <= 0 {
		maxSize = DefaultMaxBundleSize
	}
	extract := func(dir string) error {
		img, err := desc.Image()
		if err != nil {
			return &ImageError{Ref: ref, Op: "pull", Err: err}
		}
		n, err := extractLayers(img, bundleImageFolders, dir, maxSize, maxBundleFiles)
		if err != nil {
			return &ImageError{Ref: ref, Op: "extract", Err: err}
		}
		if n == 0 {
			// Still a bundle image that was read: cache the (empty) folder, so that the
			// reader says what is missing.
			return os.MkdirAll(filepath.Join(dir, "metadata"), 0o755)
		}
		return nil
	}
	cache, err := opts.cache()
	if err != nil {
		return nil, err
	}
	var dir string
	if cache == nil {
		tmp, err := os.MkdirTemp("", "olmsync-bundle-")
		if err != nil {
			return nil, fmt.Errorf("bundle image: %w", err)
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		if err := extract(tmp); err != nil {
			return nil, err
		}
		dir = tmp
	} else {
		var release func()
		dir, release, src.Cached, err = cache.fill(ctx, key, extract)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	u := readUnpacked(os.DirFS(dir), ".", "", src)
	if u.Problems.HasErrors() || u.Bundle == nil {
		return u, &BundleError{Ref: ref, Digest: src.Digest, Problems: u.Problems}
	}
	u.Bundle.Image = ref
	return u, nil
}

// LoadBundleDir reads one bundle directory (manifests/ and metadata/) on disk. A
// *BundleError says it is no bundle OLM can install; Problems lists everything found.
func LoadBundleDir(dir string) (*UnpackedBundle, error) {
	if _, err := os.Stat(filepath.Join(dir, "metadata", "annotations.yaml")); err != nil {
		return nil, fmt.Errorf("%s is not a bundle directory: %w", dir, err)
	}
	u := readUnpacked(os.DirFS(dir), ".", dir, Source{Format: FormatBundles, Ref: dir})
	if u.Problems.HasErrors() || u.Bundle == nil {
		return u, &BundleError{Ref: dir, Problems: u.Problems}
	}
	return u, nil
}

// readUnpacked reads the bundle directory dir of fsys and checks that what it carries is
// a registry+v1 bundle.
func readUnpacked(fsys fs.FS, dir, display string, src Source) *UnpackedBundle {
	v := &problems{}
	u := &UnpackedBundle{Source: src}
	if bd := readBundleDir(fsys, dir, display, v); bd != nil {
		u.Annotations, u.Bundle = bd.Annotations, bd.Bundle
		for _, o := range bd.Bundle.Objects {
			if !slices.Contains(supportedKinds, o.Kind) {
				// operator-registry's wording (`opm alpha bundle validate`).
				v.add(SeverityError, CodeUnsupportedKind, o.Origin, bd.Bundle.Package, "", bd.Bundle.Name,
					"%s is not supported type for registryV1 bundle: %s", o.Kind, o.Origin.File)
			}
		}
	} else if data, err := fs.ReadFile(fsys, dirJoin(dir, "metadata/annotations.yaml")); err == nil {
		u.Annotations, _ = ParseBundleAnnotations(data)
	}
	u.Problems = v.list
	u.Problems.Sort()
	return u
}

func dirJoin(dir, rel string) string {
	if dir == "." || dir == "" {
		return rel
	}
	return dir + "/" + rel
}

// extractLayers writes the regular files below the top-level folders of the image's
// filesystem into dest, upper layers over lower ones as a container runtime stacks them
// (whiteouts included), and returns how many there were. Unlike a tar reader that stops at
// the end of the archive, it reads every layer to its end, so that a layer whose bytes do
// not match its digest is an error, not a silently shorter bundle.
func extractLayers(img v1.Image, folders []string, dest string, maxSize int64, maxFiles int) (int, error) {
	layers, err := img.Layers()
	if err != nil {
		return 0, fmt.Errorf("read layers: %w", err)
	}
	budget := &extractBudget{maxSize: maxSize, maxFiles: maxFiles, folders: folders}
	upper := &upperLayers{written: map[string]bool{}, removed: map[string]bool{}, opaque: map[string]bool{}}
	for i := len(layers) - 1; i >= 0; i-- {
		d, _ := layers[i].Digest()
		if err := extractLayer(layers[i], dest, budget, upper); err != nil {
			return budget.files, fmt.Errorf("layer %s: %w", d, err)
		}
	}
	return budget.files, nil
}

type extractBudget struct {
	maxSize  int64
	maxFiles int
	folders  []string
	size     int64
	files    int
}

const whiteoutPrefix, opaqueWhiteout = ".wh.", ".wh..wh..opq"

// upperLayers is what the layers above the one being read decided: the files they wrote,
// the paths they removed (whiteouts) and the folders they made opaque.
type upperLayers struct {
	written, removed, opaque map[string]bool
}

// hides reports whether the upper layers hide a lower layer's file p.
func (u *upperLayers) hides(p string) bool {
	if u.written[p] || u.removed[p] {
		return true
	}
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if u.opaque[d] || u.removed[d] {
			return true
		}
	}
	return false
}

func extractLayer(layer v1.Layer, dest string, b *extractBudget, upper *upperLayers) error {
	rc, err := layer.Uncompressed()
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	this := &upperLayers{written: map[string]bool{}, removed: map[string]bool{}, opaque: map[string]bool{}}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "/"))
		base, dir := path.Base(name), path.Dir(name)
		switch {
		case base == opaqueWhiteout:
			this.opaque[dir] = true
			continue
		case strings.HasPrefix(base, whiteoutPrefix):
			this.removed[path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix))] = true
			continue
		}
		if h.Typeflag == tar.TypeDir || upper.hides(name) {
			continue
		}
		this.written[name] = true
		folder, rel, ok := strings.Cut(name, "/")
		if h.Typeflag != tar.TypeReg || !ok || !slices.Contains(b.folders, folder) {
			continue
		}
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("refusing path %q outside the %s folder", h.Name, folder)
		}
		b.size += h.Size
		if b.size > b.maxSize {
			return fmt.Errorf("the %s folders are larger than %d bytes", strings.Join(b.folders, " and "), b.maxSize)
		}
		if b.files++; b.files > b.maxFiles {
			return fmt.Errorf("the %s folders hold more than %d files", strings.Join(b.folders, " and "), b.maxFiles)
		}
		if err := writeFile(filepath.Join(dest, folder, filepath.FromSlash(rel)), tr, h.Size); err != nil {
			return err
		}
	}
	// The rest of the stream (tar padding, compression trailer) to its end: that is where a
	// layer's digest and checksum are verified.
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return err
	}
	for _, m := range [][2]map[string]bool{{upper.written, this.written}, {upper.removed, this.removed}, {upper.opaque, this.opaque}} {
		for k := range m[1] {
			m[0][k] = true
		}
	}
	return nil
}

// MatchCatalog reports where an unpacked bundle is not the bundle b of package p that a
// catalog lists by its image: its annotations name another package, or none of the
// catalog's channels that hold it; its CSV has another name or version. Each is a problem
// of code CodeCatalogMismatch; the result is nil when they agree.
func (u *UnpackedBundle) MatchCatalog(p *Package, b *Bundle) Problems {
	v := &problems{}
	annotations := Origin{File: "metadata/annotations.yaml"}
	if u.Source.Format == FormatBundles {
		annotations.File = displayPath(u.Source.Ref, annotations.File)
	}
	mismatch := func(o Origin, format string, args ...any) {
		v.add(SeverityError, CodeCatalogMismatch, o, b.Package, "", b.Name, format, args...)
	}
	if u.Annotations.Package != b.Package {
		mismatch(annotations, "annotation %s is %q, but the catalog lists this image as a bundle of package %q",
			AnnotationPackage, u.Annotations.Package, b.Package)
	}
	if p != nil {
		var channels []string
		for _, ch := range p.Channels {
			if ch.Entry(b.Name) != nil {
				channels = append(channels, ch.Name)
			}
		}
		agree := len(channels) == 0
		for _, ch := range channels {
			agree = agree || slices.Contains(u.Annotations.Channels, ch)
		}
		if !agree {
			mismatch(annotations, "annotation %s names channels %s, but the catalog has %s only in channels %s",
				AnnotationChannels, quoteList(u.Annotations.Channels), b.Name, quoteList(channels))
		}
	}
	if u.Bundle != nil && u.Bundle.CSV != nil {
		csv := u.Bundle.CSV
		if csv.Name != b.Name {
			mismatch(u.Bundle.Origin, "the image's ClusterServiceVersion is %s, but the catalog lists the image as bundle %s", csv.Name, b.Name)
		}
		if want := b.Version.String(); want != "0.0.0" && u.Bundle.Version.String() != "0.0.0" && u.Bundle.Version.String() != want {
			mismatch(u.Bundle.Origin, "the image's ClusterServiceVersion has version %s, but the catalog lists bundle %s at version %s",
				u.Bundle.Version, b.Name, want)
		}
	}
	return v.list
}

func quoteList(s []string) string {
	if len(s) == 0 {
		return "[]"
	}
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// IsPermanent reports whether a failure to load a bundle or catalog image stays a
// failure however often it is tried: the content was read and is wrong (*BundleError, or
// layers that do not decompress, do not match their digest or exceed the size bound), the
// reference cannot be parsed, or the registry is plain HTTP and that is not allowed. A
// registry that refuses, cannot be reached, breaks off or does not have the image yet may
// do better on the next try.
func IsPermanent(err error) bool {
	var be *BundleError
	if errors.As(err, &be) || errors.Is(err, ErrPlainHTTP) {
		return true
	}
	var ie *ImageError
	if !errors.As(err, &ie) {
		return false
	}
	switch ie.Op {
	case "parse":
		return true
	case "extract":
		// The bytes behind a digest never change: what does not decode now never will.
		// Only a transfer that broke off is worth another try.
		return !transient(ie.Err)
	}
	return false
}

// transient reports whether err is the network's or the registry's, not the content's.
func transient(err error) bool {
	var netErr net.Error
	var httpErr *transport.Error
	return errors.As(err, &netErr) || errors.As(err, &httpErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}
