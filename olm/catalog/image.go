package catalog

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

const (
	// ConfigsLabel is the label of a catalog image naming the folder its FBC is in.
	ConfigsLabel = "operators.operatorframework.io.index.configs.v1"
	// DefaultConfigsDir is where a catalog image keeps its FBC when it has no ConfigsLabel.
	DefaultConfigsDir = "/configs"
	// DefaultMaxImageCatalogSize bounds what is extracted from one image (1 GiB).
	DefaultMaxImageCatalogSize = 1 << 30
	// ociRefNameAnnotation names an image in an OCI layout's index.
	ociRefNameAnnotation = "org.opencontainers.image.ref.name"
)

// ImageOptions says how catalog images are pulled and kept.
type ImageOptions struct {
	// Cache keeps what was extracted from each image under its digest, bounded, and bounds
	// the pulls (see ImageCache); one is shared by every catalog and bundle image of a
	// process. When nil, CacheDir is opened as a cache without a size bound; with neither,
	// nothing is kept.
	Cache *ImageCache
	// CacheDir keeps each pulled image under its digest, so that loading an image whose
	// digest did not change reads the disk instead of the registry (when Cache is nil).
	CacheDir string
	// Keychain finds registry credentials; authn.DefaultKeychain (docker's config) when nil.
	Keychain authn.Keychain
	// Platform picks the image of a multi-platform index; linux/amd64 when nil.
	Platform *v1.Platform
	// Insecure allows plain HTTP to registries. Without it every request is HTTPS:
	// go-containerregistry would otherwise fall back to plain HTTP for registries on
	// loopback and private (RFC 1918) addresses, where a man in the middle reads the
	// credentials and swaps the content.
	Insecure bool
	// Transport overrides the HTTP transport.
	Transport http.RoundTripper
	// MaxSize bounds the bytes extracted from an image's configs folder;
	// DefaultMaxImageCatalogSize when zero.
	MaxSize int64
}

// ImageError is a catalog image that could not be resolved, pulled or read. Op says which.
type ImageError struct {
	Ref string
	Op  string
	Err error
}

func (e *ImageError) Error() string { return fmt.Sprintf("%s image %s: %v", e.Op, e.Ref, e.Err) }
func (e *ImageError) Unwrap() error { return e.Err }

func (o ImageOptions) remoteOptions(ctx context.Context) []remote.Option {
	kc := o.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc)}
	if o.Platform != nil {
		opts = append(opts, remote.WithPlatform(*o.Platform))
	}
	rt := o.Transport
	if rt == nil {
		rt = remote.DefaultTransport
	}
	if !o.Insecure {
		rt = httpsOnly{rt}
	}
	return append(opts, remote.WithTransport(rt))
}

// ErrPlainHTTP is a request to a registry over plain HTTP without ImageOptions.Insecure.
var ErrPlainHTTP = errors.New("plain HTTP to a registry is refused unless allowed explicitly (an insecure-registry flag)")

// httpsOnly refuses every request that is not HTTPS.
type httpsOnly struct{ next http.RoundTripper }

func (t httpsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" {
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Redacted(), ErrPlainHTTP)
	}
	return t.next.RoundTrip(r)
}

// cache is the ImageCache the options name, or nil.
func (o ImageOptions) cache() (*ImageCache, error) {
	if o.Cache != nil {
		return o.Cache, nil
	}
	if o.CacheDir == "" {
		return nil, nil
	}
	return OpenImageCache(o.CacheDir, 0, 0)
}

func (o ImageOptions) parse(ref string) (name.Reference, error) {
	var opts []name.Option
	if o.Insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return nil, &ImageError{Ref: ref, Op: "parse", Err: err}
	}
	return r, nil
}

// DigestReference is the repository of ref at digest (host/repository@sha256:…), the
// reference that names exactly what was pulled.
func DigestReference(ref, digest string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", &ImageError{Ref: ref, Op: "parse", Err: err}
	}
	return r.Context().Digest(digest).String(), nil
}

// ImageDigest resolves an image reference to the digest it names now, without pulling
// anything but the manifest's headers. A poller compares it with the digest it loaded
// last (Catalog.Source.Digest): the same digest means the same catalog, nothing to do.
func ImageDigest(ctx context.Context, ref string, opts ImageOptions) (string, error) {
	r, err := opts.parse(ref)
	if err != nil {
		return "", err
	}
	desc, err := remote.Head(r, opts.remoteOptions(ctx)...)
	if err != nil {
		// Some registries refuse HEAD; a GET of the manifest tells the same.
		d, getErr := remote.Get(r, opts.remoteOptions(ctx)...)
		if getErr != nil {
			return "", &ImageError{Ref: ref, Op: "resolve", Err: err}
		}
		return d.Digest.String(), nil
	}
	return desc.Digest.String(), nil
}

// get resolves ref to its manifest (or index) with the options' transport and credentials:
// the digest it names now, and what to pull. It fails with the parse error or an
// *ImageError (Op "pull").
func (o ImageOptions) get(ctx context.Context, ref string) (*remote.Descriptor, error) {
	r, err := o.parse(ref)
	if err != nil {
		return nil, err
	}
	desc, err := remote.Get(r, o.remoteOptions(ctx)...)
	if err != nil {
		return nil, &ImageError{Ref: ref, Op: "pull", Err: err}
	}
	return desc, nil
}

// LoadImage loads a catalog image from a registry: the file-based catalog in the folder
// its ConfigsLabel names (DefaultConfigsDir without one). With a CacheDir, an image already
// pulled at the same digest is read from the cache (Source.Cached).
func LoadImage(ctx context.Context, ref string, opts ImageOptions) (*Catalog, error) {
	desc, err := opts.get(ctx, ref)
	if err != nil {
		return nil, err
	}
	key := cacheKey(desc.Digest, desc.MediaType.IsIndex(), opts.Platform)
	src := Source{Format: FormatImage, Ref: ref, Digest: desc.Digest.String()}
	return loadImageCached(ctx, src, key, opts, desc.Image)
}

// LoadOCILayout loads a catalog image from an OCI image layout on disk. refName picks the
// image whose org.opencontainers.image.ref.name annotation it equals; empty when the
// layout holds one image.
func LoadOCILayout(dir, refName string, opts ImageOptions) (*Catalog, error) {
	ref := "oci:" + dir
	if refName != "" {
		ref += ":" + refName
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, &ImageError{Ref: ref, Op: "read", Err: err}
	}
	desc, err := pickManifest(idx, refName)
	if err != nil {
		return nil, &ImageError{Ref: ref, Op: "read", Err: err}
	}
	key := cacheKey(desc.Digest, desc.MediaType.IsIndex(), opts.Platform)
	src := Source{Format: FormatImage, Ref: ref, Digest: desc.Digest.String()}
	return loadImageCached(context.Background(), src, key, opts, func() (v1.Image, error) {
		if desc.MediaType.IsIndex() {
			child, err := idx.ImageIndex(desc.Digest)
			if err != nil {
				return nil, err
			}
			return imageForPlatform(child, opts.Platform)
		}
		return idx.Image(desc.Digest)
	})
}

// pickManifest finds the image of an OCI layout: the one named, or the only one.
func pickManifest(idx v1.ImageIndex, refName string) (v1.Descriptor, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	var found []v1.Descriptor
	for _, d := range im.Manifests {
		if refName == "" || d.Annotations[ociRefNameAnnotation] == refName {
			found = append(found, d)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && refName != "":
		return v1.Descriptor{}, fmt.Errorf("no image named %q in the layout", refName)
	case len(found) == 0:
		return v1.Descriptor{}, errors.New("the layout holds no image")
	}
	return v1.Descriptor{}, fmt.Errorf("the layout holds %d images; name one (oci:DIR:NAME)", len(found))
}

// imageForPlatform picks the image of an index for the platform (linux/amd64 by default).
func imageForPlatform(idx v1.ImageIndex, p *v1.Platform) (v1.Image, error) {
	want := v1.Platform{OS: "linux", Architecture: "amd64"}
	if p != nil {
		want = *p
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.Satisfies(want) && d.MediaType.IsImage() {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("no image for platform %s in the index", want.String())
}

// cacheKey names a catalog in the cache: its digest, and the platform when the digest is
// an index's (the image read from it depends on the platform).
func cacheKey(digest v1.Hash, isIndex bool, p *v1.Platform) string {
	key := digest.Algorithm + "-" + digest.Hex
	if isIndex {
		plat := "linux-amd64"
		if p != nil {
			plat = strings.NewReplacer("/", "-", ":", "-").Replace(p.String())
		}
		key += "-" + plat
	}
	return key
}

// loadImageCached reads a catalog image through the cache: from the cache when the key is
// there, else by extracting the image's configs folder (into the cache when there is one).
func loadImageCached(ctx context.Context, src Source, key string, opts ImageOptions, image func() (v1.Image, error)) (*Catalog, error) {
	extract := func(dir string) error {
		img, err := image()
		if err != nil {
			return &ImageError{Ref: src.Ref, Op: "pull", Err: err}
		}
		if err := extractConfigs(img, dir, opts.MaxSize); err != nil {
			return &ImageError{Ref: src.Ref, Op: "extract", Err: err}
		}
		return nil
	}
	cache, err := opts.cache()
	if err != nil {
		return nil, err
	}
	if cache == nil {
		tmp, err := os.MkdirTemp("", "olmsync-catalog-")
		if err != nil {
			return nil, fmt.Errorf("catalog image: %w", err)
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		if err := extract(tmp); err != nil {
			return nil, err
		}
		return loadExtracted(tmp, src)
	}
	dir, release, cached, err := cache.fill(ctx, key, extract)
	if err != nil {
		return nil, err
	}
	defer release()
	src.Cached = cached
	return loadExtracted(dir, src)
}

func loadExtracted(dir string, src Source) (*Catalog, error) {
	configs, err := os.ReadFile(filepath.Join(dir, "configs-dir"))
	if err != nil {
		return nil, fmt.Errorf("catalog cache %s: %w", dir, err)
	}
	c, err := loadFBC(os.DirFS(filepath.Join(dir, "configs")), ".", string(configs))
	if err != nil {
		return nil, fmt.Errorf("read catalog of image %s: %w", src.Ref, err)
	}
	c.Source = src
	return c, nil
}

// extractConfigs writes the regular files of the image's configs folder below dir/configs,
// and the folder's path in the image to dir/configs-dir.
func extractConfigs(img v1.Image, dir string, maxSize int64) error {
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("read image config: %w", err)
	}
	configs := DefaultConfigsDir
	if label := cfg.Config.Labels[ConfigsLabel]; label != "" {
		configs = label
	}
	configs = path.Clean("/" + configs)
	if maxSize <= 0 {
		maxSize = DefaultMaxImageCatalogSize
	}
	if err := os.WriteFile(filepath.Join(dir, "configs-dir"), []byte(configs), 0o644); err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	n, err := extractTree(tar.NewReader(rc), strings.TrimPrefix(configs, "/"), filepath.Join(dir, "configs"), maxSize)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("the image has no files under %s", configs)
	}
	return nil
}

// extractTree writes the regular files of the tar stream below prefix into dest and
// returns how many there were. Paths that would leave dest are refused.
func extractTree(tr *tar.Reader, prefix, dest string, maxSize int64) (int, error) {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return 0, err
	}
	files, total := 0, int64(0)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return files, err
		}
		rel, ok := strings.CutPrefix(path.Clean(strings.TrimPrefix(h.Name, "/")), prefix+"/")
		if !ok || h.Typeflag != tar.TypeReg {
			continue
		}
		if !filepath.IsLocal(rel) {
			return files, fmt.Errorf("refusing path %q outside the configs folder", h.Name)
		}
		total += h.Size
		if total > maxSize {
			return files, fmt.Errorf("the configs folder is larger than %d bytes", maxSize)
		}
		if err := writeFile(filepath.Join(dest, filepath.FromSlash(rel)), tr, h.Size); err != nil {
			return files, err
		}
		files++
	}
}

func writeFile(file string, r io.Reader, size int64) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, r, size); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
