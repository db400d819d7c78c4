package olmtest

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/reconcile/olm/catalog"
)

// FBC is a file-based catalog of the bundles, one JSON value per line: each package has one
// channel, "stable", its default, whose entries carry the bundles' upgrade edges; each
// bundle carries its CSV and owned CRDs as olm.bundle.object properties, so that plans get
// steps without unpacking bundle images.
func FBC(tb testing.TB, bundles []Bundle) string {
	tb.Helper()
	var out strings.Builder
	line := func(v any) {
		data, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		out.Write(data)
		out.WriteByte('\n')
	}
	entries := map[string][]map[string]any{}
	var order []string
	for _, b := range bundles {
		if _, ok := entries[b.Package]; !ok {
			order = append(order, b.Package)
		}
		e := map[string]any{"name": b.Name()}
		if b.Replaces != "" {
			e["replaces"] = b.Replaces
		}
		if len(b.Skips) > 0 {
			e["skips"] = b.Skips
		}
		if b.SkipRange != "" {
			e["skipRange"] = b.SkipRange
		}
		entries[b.Package] = append(entries[b.Package], e)
	}
	for _, p := range order {
		line(map[string]any{"schema": "olm.package", "name": p, "defaultChannel": "stable"})
		line(map[string]any{"schema": "olm.channel", "package": p, "name": "stable", "entries": entries[p]})
	}
	for _, b := range bundles {
		props := []map[string]any{
			{"type": "olm.package", "value": map[string]any{"packageName": b.Package, "version": b.Version}},
		}
		for _, a := range b.Owns {
			props = append(props, map[string]any{"type": "olm.gvk", "value": map[string]any{"group": a.Group, "version": a.Version, "kind": a.Kind}})
		}
		for _, a := range b.Requires {
			props = append(props, map[string]any{"type": "olm.gvk.required", "value": map[string]any{"group": a.Group, "version": a.Version, "kind": a.Kind}})
		}
		objects := []string{b.CSV()}
		for _, a := range b.Owns {
			objects = append(objects, CRD(a))
		}
		for _, o := range objects {
			j, err := yaml.YAMLToJSON([]byte(o))
			if err != nil {
				tb.Fatal(err)
			}
			props = append(props, map[string]any{"type": "olm.bundle.object", "value": map[string]any{"data": base64.StdEncoding.EncodeToString(j)}})
		}
		line(map[string]any{"schema": "olm.bundle", "name": b.Name(), "package": b.Package, "image": "example.com/bundles/" + b.Name(), "properties": props})
	}
	return out.String()
}

// Registry is an OCI registry served in-process on loopback (go-containerregistry's).
type Registry struct {
	// Host is host:port, to put in image references.
	Host string
	srv  *httptest.Server
}

// ServeRegistry starts a registry for the test; it stops when the test ends.
func ServeRegistry(tb testing.TB) *Registry {
	tb.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	tb.Cleanup(srv.Close)
	return &Registry{Host: strings.TrimPrefix(srv.URL, "http://"), srv: srv}
}

// Close stops the registry now, as a registry going away would.
func (r *Registry) Close() { r.srv.Close() }

// PushCatalog pushes a catalog image holding fbc under /configs (labelled as opm labels
// catalog images) as repo:tag and returns its reference and digest.
func (r *Registry) PushCatalog(tb testing.TB, repoTag, fbc string) (ref, digest string) {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "configs/catalog.json", Mode: 0o644, Size: int64(len(fbc)), Typeflag: tar.TypeReg}); err != nil {
		tb.Fatal(err)
	}
	if _, err := tw.Write([]byte(fbc)); err != nil {
		tb.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		tb.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		tb.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Labels: map[string]string{catalog.ConfigsLabel: "/configs"}})
	if err != nil {
		tb.Fatal(err)
	}
	ref = fmt.Sprintf("%s/%s", r.Host, repoTag)
	parsed, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		tb.Fatal(err)
	}
	if err := remote.Write(parsed, img); err != nil {
		tb.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		tb.Fatal(err)
	}
	return ref, d.String()
}
