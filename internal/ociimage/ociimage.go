package ociimage

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Where things are in the image.
const (
	BinaryPath = "/usr/local/bin/olmsync"
	CAPath     = "/etc/ssl/certs/ca-certificates.crt"
	// User is the image's user: distroless's nonroot, which the chart's securityContext
	// names too.
	User = "65532:65532"
	Home = "/home/nonroot"
)

// The OCI labels (and manifest annotations) of the image.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelVersion  = "org.opencontainers.image.version"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
)

// Options say what to build.
type Options struct {
	// Dir is the module root; Package the main package in it ("./cmd/olmsync").
	Dir, Package string
	// Platforms are the os/arch pairs to build for ("linux/amd64"); one image each.
	Platforms []v1.Platform
	// Version, Revision and Source are the build's version, its commit and the
	// repository's URL: stamped into the binary (main.version, main.commit) and the labels.
	Version, Revision, Source string
	// Epoch is SOURCE_DATE_EPOCH: every timestamp of the image, and the binary's build date.
	Epoch time.Time
	// WorkDir receives the binaries (a temporary folder when empty).
	WorkDir string
}

// Build compiles the binary for each platform and assembles its image.
func Build(ctx context.Context, opts Options) (map[string]v1.Image, error) {
	if len(opts.Platforms) == 0 {
		return nil, errors.New("build image: no platform")
	}
	work := opts.WorkDir
	if work == "" {
		dir, err := os.MkdirTemp("", "olmsync-image-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	base, err := BaseLayer(opts.Epoch)
	if err != nil {
		return nil, err
	}
	out := map[string]v1.Image{}
	for _, p := range opts.Platforms {
		bin := filepath.Join(work, fmt.Sprintf("olmsync-%s-%s", p.OS, p.Architecture))
		if err := compile(ctx, opts, p, bin); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		img, err := Assemble(base, data, p, opts)
		if err != nil {
			return nil, err
		}
		out[p.String()] = img
	}
	return out, nil
}

// LDFlags are the linker flags of a reproducible build: the version, commit and date
// `olmsync version` prints, and no symbol table.
func LDFlags(version, revision string, epoch time.Time) string {
	return fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s -X main.date=%s",
		version, revision, epoch.UTC().Format(time.RFC3339))
}

// compile builds a static binary: no cgo (no libc to ship), no paths of this machine
// (-trimpath), no VCS stamp (the revision is in the ldflags), so the same source and Go
// give the same bytes.
func compile(ctx context.Context, opts Options, p v1.Platform, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", LDFlags(opts.Version, opts.Revision, opts.Epoch), "-o", out, opts.Package)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=")
	if p.Variant != "" && p.Architecture == "arm" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	if data, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s: %w\n%s", p, err, data)
	}
	return nil
}

// Assemble makes the image of a binary on the base layer.
func Assemble(base v1.Layer, binary []byte, p v1.Platform, opts Options) (v1.Image, error) {
	binLayer, err := layer(opts.Epoch, []file{
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, data: binary},
	})
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: opts.Epoch.UTC()}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "olmsync base: passwd, group, CA certificates, /tmp, " + Home, Comment: "no shell"}},
		mutate.Addendum{Layer: binLayer, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "olmsync " + opts.Version + " (CGO_ENABLED=0 go build -trimpath)"}},
	)
	if err != nil {
		return nil, err
	}
	labels := Labels(opts)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config = v1.Config{
		User:       User,
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"run"},
		WorkingDir: Home,
		Env: []string{
			"PATH=/usr/local/bin",
			"HOME=" + Home,
			"SSL_CERT_FILE=" + CAPath,
		},
		Labels: labels,
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

// Labels are the image's OCI labels.
func Labels(opts Options) map[string]string {
	return map[string]string{
		LabelSource:   opts.Source,
		LabelRevision: opts.Revision,
		LabelVersion:  opts.Version,
		LabelCreated:  opts.Epoch.UTC().Format(time.RFC3339),
		LabelTitle:    "olmsync",
	}
}

// BaseLayer is what distroless's static image gives a Go binary, written here: the
// nonroot user, the CA certificates, /tmp and the user's home — and no shell, no package
// manager, nothing else.
func BaseLayer(epoch time.Time) (v1.Layer, error) {
	ca, err := CABundle()
	if err != nil {
		return nil, err
	}
	return layer(epoch, []file{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:" + Home + ":/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		// Go's resolver reads it: hosts files before DNS, as glibc would.
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(CAPath, "/"), mode: 0o644, data: ca},
		{name: "home/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(Home, "/") + "/", mode: 0o700, dir: true, uid: 65532, gid: 65532},
		{name: "root/", mode: 0o700, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
	})
}

// CABundle is the PEM bundle of the root certificates of Mozilla's NSS store, as the
// pinned golang.org/x/crypto/x509roots/fallback module carries them. Roots with a
// constraint a PEM file cannot say (a distrust-after date) are left out.
func CABundle() ([]byte, error) {
	var b bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		if err := pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, err
		}
	}
	if b.Len() == 0 {
		return nil, errors.New("no root certificates in golang.org/x/crypto/x509roots/fallback")
	}
	return b.Bytes(), nil
}

type file struct {
	name     string
	mode     int64
	dir      bool
	data     []byte
	uid, gid int
}

// layer writes the files, in order, into a layer whose every timestamp is epoch and every
// owner numeric, so that its bytes depend on nothing but the files.
func layer(epoch time.Time, files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.gid,
			ModTime: epoch.UTC(), AccessTime: epoch.UTC(), ChangeTime: epoch.UTC(),
			Format: tar.FormatPAX,
		}
		if f.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// Written is what Write wrote.
type Written struct {
	// Layout is the OCI layout folder; Tarballs the docker-loadable tarballs, by platform.
	Layout   string
	Tarballs map[string]string
	// Digests are the images' manifest digests, by platform; Sizes their compressed sizes
	// (config and layers).
	Digests map[string]v1.Hash
	Sizes   map[string]int64
}

// Write writes the images into dir: an OCI layout (dir/oci, one manifest per platform,
// named ref) and, per platform, a tarball of ref that `docker load` and `crane push` take
// (dir/olmsync.tar for a single platform, dir/olmsync-<os>-<arch>.tar for several).
func Write(images map[string]v1.Image, ref name.Tag, dir string) (*Written, error) {
	w := &Written{Layout: filepath.Join(dir, "oci"), Tarballs: map[string]string{}, Digests: map[string]v1.Hash{}, Sizes: map[string]int64{}}
	if err := os.RemoveAll(w.Layout); err != nil {
		return nil, err
	}
	p, err := layout.Write(w.Layout, empty.Index)
	if err != nil {
		return nil, err
	}
	platforms := make([]string, 0, len(images))
	for k := range images {
		platforms = append(platforms, k)
	}
	sort.Strings(platforms)
	for _, plat := range platforms {
		img := images[plat]
		d, err := img.Digest()
		if err != nil {
			return nil, err
		}
		w.Digests[plat] = d
		if w.Sizes[plat], err = Size(img); err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.String()}),
			layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant})); err != nil {
			return nil, err
		}
		file := filepath.Join(dir, "olmsync.tar")
		if len(images) > 1 {
			file = filepath.Join(dir, "olmsync-"+strings.ReplaceAll(plat, "/", "-")+".tar")
		}
		if err := tarball.WriteToFile(file, ref, img); err != nil {
			return nil, err
		}
		w.Tarballs[plat] = file
	}
	return w, nil
}

// Size is the image's compressed size: its config and layers, what a registry stores.
func Size(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	n := m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}
