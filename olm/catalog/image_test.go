package catalog

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// tarOf is a tar stream of the files (path -> content), in the order given by paths.
func tarOf(t *testing.T, files map[string]string, paths ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Size: int64(len(files[p])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[p])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// catalogImage is an image of one layer holding files, labelled with the configs folder
// (no label when configs is empty).
func catalogImage(t *testing.T, configs string, files map[string]string) v1.Image {
	t.Helper()
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	data := tarOf(t, files, paths...)
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	cfg := v1.Config{}
	if configs != "" {
		cfg.Labels = map[string]string{ConfigsLabel: configs}
	}
	img, err = mutate.Config(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// startRegistry serves an OCI registry on loopback for the test.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func push(t *testing.T, ref string, img v1.Image) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

const otherJSON = `{"schema":"olm.package","name":"other","defaultChannel":"stable"}
{"schema":"olm.channel","package":"other","name":"stable","entries":[{"name":"other.v1.0.0"}]}
{"schema":"olm.bundle","name":"other.v1.0.0","package":"other","image":"quay.io/other:1","properties":[{"type":"olm.package","value":{"packageName":"other","version":"1.0.0"}}]}
`

func TestImageCatalogPullCacheRepoll(t *testing.T) {
	ctx := context.Background()
	ref := startRegistry(t) + "/olm/catalog:latest"
	// The test registry speaks plain HTTP, which must be allowed explicitly.
	opts := ImageOptions{CacheDir: t.TempDir(), Keychain: authn.NewMultiKeychain(), Insecure: true}

	first := push(t, ref, catalogImage(t, "/catalog", map[string]string{
		"catalog/etcd/catalog.json": etcdJSON,
		"etc/passwd":                "not part of the catalog",
	}))
	c, err := LoadImage(ctx, ref, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != (Source{Format: FormatImage, Ref: ref, Digest: first}) {
		t.Errorf("source = %+v, want the pushed digest %s, not cached", c.Source, first)
	}
	if len(c.Packages) != 1 || c.Package("etcd") == nil || c.Package("etcd").Bundle("etcd.v0.9.2").Origin != (Origin{File: "/catalog/etcd/catalog.json", Line: 4}) {
		t.Fatalf("packages %v; want etcd read from /catalog/etcd/catalog.json", c.Packages)
	}

	// Re-poll: the tag still names the same digest, so nothing needs pulling.
	digest, err := ImageDigest(ctx, ref, opts)
	if err != nil || digest != first {
		t.Fatalf("ImageDigest = %s, %v; want %s", digest, err, first)
	}
	again, err := LoadImage(ctx, ref, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Source.Cached || again.Source.Digest != first {
		t.Errorf("second load: source %+v, want cached at %s", again.Source, first)
	}
	if diff := cmp.Diff(summarize(t, c), summarize(t, again)); diff != "" {
		t.Errorf("the cached catalog differs from the pulled one (-pulled +cached):\n%s", diff)
	}

	// A new catalog pushed under the tag: a new digest, pulled anew.
	second := push(t, ref, catalogImage(t, "", map[string]string{
		"configs/etcd/catalog.json":  etcdJSON,
		"configs/other/catalog.json": otherJSON,
	}))
	if digest, err := ImageDigest(ctx, ref, opts); err != nil || digest != second || digest == first {
		t.Fatalf("after the push ImageDigest = %s, %v; want the new %s", digest, err, second)
	}
	updated, err := Load(ctx, ref, LoadOptions{Image: opts})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Source.Cached || updated.Source.Digest != second || updated.Package("other") == nil {
		t.Errorf("after the push: source %+v, packages %d; want a fresh pull of %s with both packages", updated.Source, len(updated.Packages), second)
	}
	if updated.Package("other").Origin.File != "/configs/other/catalog.json" {
		t.Errorf("without a configs label the catalog is read from /configs; origin %s", updated.Package("other").Origin)
	}
	entries, _ := os.ReadDir(opts.CacheDir)
	if len(entries) != 2 {
		t.Errorf("cache holds %d entries, want one per digest (2)", len(entries))
	}
}

func TestImageCatalogErrors(t *testing.T) {
	ctx := context.Background()
	host := startRegistry(t)
	opts := ImageOptions{Keychain: authn.NewMultiKeychain(), Insecure: true}

	push(t, host+"/olm/empty:1", catalogImage(t, "/configs", map[string]string{"other/file.json": "{}"}))
	_, err := LoadImage(ctx, host+"/olm/empty:1", opts)
	var imgErr *ImageError
	if !errors.As(err, &imgErr) || imgErr.Op != "extract" || !strings.Contains(err.Error(), "the image has no files under /configs") {
		t.Errorf("image without configs: error = %v", err)
	}

	_, err = LoadImage(ctx, host+"/olm/missing:1", opts)
	if !errors.As(err, &imgErr) || imgErr.Op != "pull" {
		t.Errorf("missing image: error = %v, want an ImageError of op pull", err)
	}
	if _, err := ImageDigest(ctx, host+"/olm/missing:1", opts); !errors.As(err, &imgErr) || imgErr.Op != "resolve" {
		t.Errorf("missing image digest: error = %v", err)
	}

	push(t, host+"/olm/big:1", catalogImage(t, "/configs", map[string]string{"configs/a.json": etcdJSON}))
	if _, err := LoadImage(ctx, host+"/olm/big:1", ImageOptions{Keychain: opts.Keychain, MaxSize: 100, Insecure: true}); err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Errorf("size limit: error = %v", err)
	}
	if _, err := LoadImage(ctx, "UPPER/case", opts); !errors.As(err, &imgErr) || imgErr.Op != "parse" {
		t.Errorf("bad reference: error = %v", err)
	}
}

// TestPlainHTTPRefused: a registry that speaks plain HTTP is refused, although it is on
// loopback (go-containerregistry would fall back to plain HTTP there, and for private
// addresses), unless Insecure allows it.
func TestPlainHTTPRefused(t *testing.T) {
	ctx := context.Background()
	ref := startRegistry(t) + "/olm/catalog:1"
	push(t, ref, catalogImage(t, "/configs", map[string]string{"configs/a.json": etcdJSON}))
	_, err := LoadImage(ctx, ref, ImageOptions{Keychain: authn.NewMultiKeychain()})
	if !errors.Is(err, ErrPlainHTTP) || !IsPermanent(err) {
		t.Errorf("plain HTTP without Insecure: error = %v, want ErrPlainHTTP (permanent)", err)
	}
	if _, err := ImageDigest(ctx, ref, ImageOptions{Keychain: authn.NewMultiKeychain()}); !errors.Is(err, ErrPlainHTTP) {
		t.Errorf("digest over plain HTTP without Insecure: error = %v", err)
	}
	if _, err := LoadImage(ctx, ref, ImageOptions{Keychain: authn.NewMultiKeychain(), Insecure: true}); err != nil {
		t.Errorf("plain HTTP with Insecure: %v", err)
	}
}

func TestOCILayoutCatalog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "layout")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	img := catalogImage(t, "/configs", map[string]string{"configs/catalog.json": etcdJSON})
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{ociRefNameAnnotation: "v1"})); err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	for _, src := range []string{"oci:" + dir, "oci:" + dir + ":v1"} {
		c, err := Load(context.Background(), src, LoadOptions{Image: ImageOptions{CacheDir: t.TempDir()}})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if c.Source.Digest != digest.String() || c.Package("etcd") == nil {
			t.Errorf("%s: source %+v, %d packages", src, c.Source, len(c.Packages))
		}
	}
	if _, err := Load(context.Background(), "oci:"+dir+":v2", LoadOptions{}); err == nil || !strings.Contains(err.Error(), `no image named "v2"`) {
		t.Errorf("unknown name: error = %v", err)
	}
}

func TestExtractTreeStaysInside(t *testing.T) {
	files := map[string]string{
		"configs/ok.json":              "{}",
		"configs/../../escape.json":    "x",
		"configs/a/../../../up.json":   "x",
		"/configs/sub/abs.json":        "{}",
		"configsfile.json":             "x",
		"elsewhere/configs/other.json": "x",
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	root := t.TempDir()
	dest := filepath.Join(root, "out")
	n, err := extractTree(tar.NewReader(bytes.NewReader(tarOf(t, files, paths...))), "configs", dest, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	if n != 2 || strings.Join(got, ",") != "out/ok.json,out/sub/abs.json" {
		t.Errorf("extracted %d files: %v; want only out/ok.json and out/sub/abs.json", n, got)
	}
}

func TestLooksLikeImage(t *testing.T) {
	for s, want := range map[string]bool{
		"quay.io/operatorhubio/catalog:latest": true,
		"localhost/catalog":                    true,
		"127.0.0.1:5000/olm/catalog@sha256:ab": true,
		"catalogs/catalog.json":                false,
		"catalog":                              false,
		"./catalog":                            false,
		"../x/catalog":                         false,
		"/abs/catalog.json":                    false,
	} {
		if got := looksLikeImage(s); got != want {
			t.Errorf("looksLikeImage(%q) = %v, want %v", s, got, want)
		}
	}
}
