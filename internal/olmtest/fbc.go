package olmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/internal/ocitest"
	"github.com/olmsync/olmsync/olm/catalog"
)

// FBC is a file-based catalog of the bundles, one JSON value per line: each package has the
// channels its bundles name (Bundle.Channels; "stable", the default, when none), whose
// entries carry the bundles' upgrade edges; each
// bundle carries its CSV and owned CRDs as olm.bundle.object properties, so that plans get
// steps without unpacking bundle images.
func FBC(tb testing.TB, bundles []Bundle) string {
	tb.Helper()
	return fbc(tb, bundles, nil)
}

// fbc writes the catalog of FBC; with images, each bundle is listed by its image there
// only, without its content.
func fbc(tb testing.TB, bundles []Bundle, images map[string]string) string {
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
	entries := map[string]map[string][]map[string]any{} // package -> channel -> entries
	channels := map[string][]string{}
	var order []string
	for _, b := range bundles {
		if _, ok := entries[b.Package]; !ok {
			order = append(order, b.Package)
			entries[b.Package] = map[string][]map[string]any{}
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
		for _, ch := range b.InChannels() {
			if _, ok := entries[b.Package][ch]; !ok {
				channels[b.Package] = append(channels[b.Package], ch)
			}
			entries[b.Package][ch] = append(entries[b.Package][ch], e)
		}
	}
	for _, p := range order {
		def := channels[p][0]
		if slices.Contains(channels[p], "stable") {
			def = "stable"
		}
		line(map[string]any{"schema": "olm.package", "name": p, "defaultChannel": def})
		for _, ch := range channels[p] {
			line(map[string]any{"schema": "olm.channel", "package": p, "name": ch, "entries": entries[p][ch]})
		}
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
		for _, r := range b.RequiresPackages {
			props = append(props, map[string]any{"type": "olm.package.required", "value": map[string]any{"packageName": r.Package, "versionRange": r.VersionRange}})
		}
		image := "example.com/bundles/" + b.Name()
		var objects []string
		if ref, ok := images[b.Name()]; ok {
			image = ref
		} else {
			objects = append(objects, b.CSV())
			for _, a := range b.Owns {
				objects = append(objects, CRD(a))
			}
		}
		for _, o := range objects {
			j, err := yaml.YAMLToJSON([]byte(o))
			if err != nil {
				tb.Fatal(err)
			}
			props = append(props, map[string]any{"type": "olm.bundle.object", "value": map[string]any{"data": base64.StdEncoding.EncodeToString(j)}})
		}
		line(map[string]any{"schema": "olm.bundle", "name": b.Name(), "package": b.Package, "image": image, "properties": props})
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

// BundleCatalog is a catalog image made of real bundles (their folders in ../shared), each
// pushed as a bundle image, and listed by digest in the catalog's FBC, with no content of
// its own: what OLM's real catalogs look like.
type BundleCatalog struct {
	// Ref is the catalog image (by tag).
	Ref string
	// Images are the bundle images by CSV name (host/repo@sha256:…).
	Images map[string]string
	// Catalog is the catalog as pushed (Edit applied).
	Catalog *catalog.Catalog
}

// BundleCatalogOptions change what PushBundleCatalog pushes.
type BundleCatalogOptions struct {
	// RepoPrefix is where the bundle images go: <prefix><package>:<version>.
	RepoPrefix string
	// Edit changes the catalog before it is written (a bundle pointed at another image).
	Edit func(c *catalog.Catalog)
}

// PushBundleCatalog pushes every bundle of the package folders (shared data folders such
// as data/catalogs/community-operators-bundles/operators/etcd) as a bundle image, and a
// catalog image repoTag listing them by digest. A package's default channel that names no
// channel (camel-k's bundles name stable-1.10, which none of them is in) becomes its first
// channel, as a catalog build would have to choose one.
func (r *Registry) PushBundleCatalog(tb testing.TB, repoTag string, opts BundleCatalogOptions, packageDirs ...string) *BundleCatalog {
	tb.Helper()
	out := &BundleCatalog{Ref: r.Host + "/" + repoTag, Images: map[string]string{}, Catalog: &catalog.Catalog{}}
	for _, dir := range packageDirs {
		c, err := catalog.LoadPath(dir)
		if err != nil {
			tb.Fatal(err)
		}
		if errs := c.Problems.Errors(); len(errs) > 0 {
			tb.Fatalf("bundles of %s: %v", dir, errs)
		}
		bundleDirs, err := filepath.Glob(filepath.Join(dir, "*", "metadata", "annotations.yaml"))
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range c.Packages {
			if p.Channel(p.DefaultChannel) == nil && len(p.Channels) > 0 {
				p.DefaultChannel = p.Channels[0].Name
			}
			for _, b := range p.Bundles {
				folder := ""
				for _, a := range bundleDirs {
					bd := filepath.Dir(filepath.Dir(a))
					if strings.HasPrefix(b.Origin.File, bd+string(filepath.Separator)) {
						folder = bd
					}
				}
				if folder == "" {
					tb.Fatalf("no folder for bundle %s (%s)", b.Name, b.Origin)
				}
				ref, _ := r.Push(tb, fmt.Sprintf("%s%s:%s", opts.RepoPrefix, p.Name, filepath.Base(folder)), ocitest.BundleImage(tb, folder, nil))
				out.Images[b.Name] = ref
				b.Image, b.CSV, b.Objects = ref, nil, nil
			}
		}
		out.Catalog.Packages = append(out.Catalog.Packages, c.Packages...)
	}
	out.Catalog.Sort()
	if opts.Edit != nil {
		opts.Edit(out.Catalog)
	}
	var fbc strings.Builder
	if err := catalog.WriteFBC(&fbc, out.Catalog, catalog.RenderOptions{}); err != nil {
		tb.Fatal(err)
	}
	r.PushCatalog(tb, repoTag, fbc.String())
	return out
}

// PushImageOnlyCatalog pushes every bundle as a bundle image (PushBundle) to
// <repoPrefix><package>:<version>, and a catalog image repoTag whose FBC is FBC's but lists
// each bundle by image digest only, as real catalogs do. It returns the catalog's reference
// (by tag).
func (r *Registry) PushImageOnlyCatalog(tb testing.TB, repoTag, repoPrefix string, bundles []Bundle) string {
	tb.Helper()
	images := map[string]string{}
	for _, b := range bundles {
		images[b.Name()] = r.PushBundle(tb, fmt.Sprintf("%s%s:%s", repoPrefix, b.Package, b.Version), b)
	}
	ref, _ := r.PushCatalog(tb, repoTag, fbc(tb, bundles, images))
	return ref
}

// PushBundle pushes the bundle as a bundle image repoTag, as opm builds one: its CSV and
// owned CRDs under manifests/, metadata/annotations.yaml naming its package and channels
// (the first the default). It returns the image's reference by digest.
func (r *Registry) PushBundle(tb testing.TB, repoTag string, b Bundle) string {
	tb.Helper()
	channels := b.InChannels()
	files := map[string][]byte{
		"manifests/" + b.Name() + ".clusterserviceversion.yaml": []byte(b.CSV()),
		"metadata/annotations.yaml": fmt.Appendf(nil, "annotations:\n"+
			"  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n"+
			"  operators.operatorframework.io.bundle.manifests.v1: manifests/\n"+
			"  operators.operatorframework.io.bundle.metadata.v1: metadata/\n"+
			"  operators.operatorframework.io.bundle.package.v1: %s\n"+
			"  operators.operatorframework.io.bundle.channels.v1: %s\n"+
			"  operators.operatorframework.io.bundle.channel.default.v1: %s\n", b.Package, strings.Join(channels, ","), channels[0]),
	}
	for _, a := range b.Owns {
		files["manifests/"+a.CRDName()+".crd.yaml"] = []byte(CRD(a))
	}
	ref, _ := r.Push(tb, repoTag, ocitest.Files(tb, files, nil))
	return ref
}
