package olmtest

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/ocitest"
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

// Registry is an OCI registry served in-process over HTTPS on loopback
// (internal/ocitest), with what the OLM tests push to it.
type Registry struct {
	*ocitest.Registry
}

// ServeRegistry starts a registry for the test; it stops when the test ends.
func ServeRegistry(tb testing.TB) *Registry {
	tb.Helper()
	return &Registry{Registry: ocitest.Serve(tb)}
}

// ImageOptions are the options that reach the registry (its certificate trusted); the
// rest as given.
func (r *Registry) ImageOptions(opts catalog.ImageOptions) catalog.ImageOptions {
	opts.Transport = r.Transport()
	return opts
}

// PushCatalog pushes a catalog image holding fbc under /configs (labelled as opm labels
// catalog images) as repo:tag and returns its reference (by tag) and digest.
func (r *Registry) PushCatalog(tb testing.TB, repoTag, fbc string) (ref, digest string) {
	tb.Helper()
	img := ocitest.Files(tb, map[string][]byte{"configs/catalog.json": []byte(fbc)}, map[string]string{catalog.ConfigsLabel: "/configs"})
	_, digest = r.Push(tb, repoTag, img)
	return r.Host + "/" + repoTag, digest
}
