package ociimage

import (
	"archive/tar"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var epoch = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func options(t *testing.T) Options {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Dir: root, Package: "./cmd/olmsync",
		Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}},
		Version:   "v0.1.0-test", Revision: "0123456789abcdef0123456789abcdef01234567",
		Source: "https://github.com/olmsync/olmsync", Epoch: epoch,
		WorkDir: t.TempDir(),
	}
}

// TestImage builds the image twice from the same source — two `go build`s into two
// folders, a moment apart — and gets the same digest; writes it as an OCI layout (the
// same digest) and a tarball, loads it from the tarball `docker load` takes, checks its user, entrypoint, labels and files (the nonroot user,
// the CA bundle, no shell), and runs the binary taken out of it: static, and it says its
// version.
func TestImage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image's binary is for linux")
	}
	ctx := context.Background()
	first, err := Build(ctx, options(t))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // a file time of the second build differs, if anything reads one
	second, err := Build(ctx, options(t))
	if err != nil {
		t.Fatal(err)
	}
	platform := "linux/" + runtime.GOARCH
	d1, _ := first[platform].Digest()
	d2, _ := second[platform].Digest()
	if d1 != d2 {
		t.Fatalf("two builds of the same source: %s and %s", d1, d2)
	}

	dir := t.TempDir()
	ref, err := name.NewTag("ghcr.io/olmsync/olmsync:v0.1.0-test")
	if err != nil {
		t.Fatal(err)
	}
	w, err := Write(first, ref, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s: %d bytes compressed", d1, w.Sizes[platform])
	img, err := tarball.ImageFromPath(w.Tarballs[platform], &ref)
	if err != nil {
		t.Fatalf("load the tarball: %v", err)
	}
	// docker's tarball format keeps the config and the layers, not the manifest: the
	// same image by its config digest (the OCI layout keeps the manifest, digest and all).
	c1, _ := first[platform].ConfigName()
	if c, _ := img.ConfigName(); c != c1 {
		t.Errorf("the tarball's image has config %s, the built one %s", c, c1)
	}
	// The OCI layout holds the same image, for its platform.
	idx, err := layout.ImageIndexFromPath(w.Layout)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != d1 || im.Manifests[0].Platform == nil || im.Manifests[0].Platform.Architecture != runtime.GOARCH {
		t.Errorf("layout index %+v, want the image %s for %s", im.Manifests, d1, platform)
	}
	if mt, _ := first[platform].MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("media type %s, want OCI", mt)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cf.Config.User)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/usr/local/bin/olmsync"}) || !slices.Equal(cf.Config.Cmd, []string{"run"}) {
		t.Errorf("entrypoint %q cmd %q", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   "https://github.com/olmsync/olmsync",
		"org.opencontainers.image.revision": "0123456789abcdef0123456789abcdef01234567",
		"org.opencontainers.image.version":  "v0.1.0-test",
		"org.opencontainers.image.created":  "2026-11-25T12:00:00Z",
	} {
		if got := cf.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if !cf.Created.Equal(epoch) || cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("created %s, platform %s/%s", cf.Created, cf.OS, cf.Architecture)
	}

	files := filesOf(t, img)
	for _, shell := range []string{"bin/sh", "bin/bash", "usr/bin/sh", "bin/busybox"} {
		if _, ok := files[shell]; ok {
			t.Errorf("the image has a shell: %s", shell)
		}
	}
	if !strings.Contains(string(files["etc/passwd"]), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd lacks the nonroot user:\n%s", files["etc/passwd"])
	}
	if n := countCerts(t, files["etc/ssl/certs/ca-certificates.crt"]); n < 100 {
		t.Errorf("the CA bundle holds %d certificates", n)
	}

	bin := filepath.Join(t.TempDir(), "olmsync")
	if err := os.WriteFile(bin, files["usr/local/bin/olmsync"], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := static(bin); err != nil {
		t.Error(err)
	}
	if runtime.GOARCH == cf.Architecture {
		out, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "olmsync v0.1.0-test") || !strings.Contains(string(out), "0123456789abcdef") {
			t.Errorf("olmsync version from the image: %v\n%s", err, out)
		}
	}
}

// filesOf reads the image's filesystem, layers flattened.
func filesOf(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(h.Name, "/")] = data
	}
}

func countCerts(t *testing.T, data []byte) int {
	t.Helper()
	n := 0
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return n
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			t.Errorf("a certificate of the bundle: %v", err)
		}
		n++
	}
}

// static reports an error unless the ELF file has no interpreter and needs no library.
func static(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("the binary needs a dynamic loader: not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return errors.New("the binary needs " + strings.Join(libs, ", "))
	}
	return nil
}

// The base layer alone is the same bytes every time, whatever the clock says.
func TestBaseLayerReproducible(t *testing.T) {
	a, err := BaseLayer(epoch)
	if err != nil {
		t.Fatal(err)
	}
	b, err := BaseLayer(epoch)
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Errorf("base layers %s and %s", da, db)
	}
	rc, err := a.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(epoch) {
			t.Errorf("%s: time %s, want SOURCE_DATE_EPOCH", h.Name, h.ModTime)
		}
		if h.Name == "home/nonroot/" && (h.Uid != 65532 || h.Gid != 65532) {
			t.Errorf("the nonroot home belongs to %d:%d", h.Uid, h.Gid)
		}
	}
}
