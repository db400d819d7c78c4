package compare_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/olm/catalog"
)

// exampleImages is where the examples' catalogs list their bundle images. Nothing is
// pulled from there: the test rewrites it to the loopback registry in its copy of the
// catalog, and pushes there a bundle image made from each catalog entry.
const exampleImages = "quay.io/example/"

// imageCatalog is an example's catalog as both sides of the comparison read it.
type imageCatalog struct {
	// Dir is the copy of the catalog folder, every image reference at quay.io/example/
	// rewritten to the registry: what `check --catalog` is given.
	Dir string
	// Image is the same catalog pushed as an FBC catalog image: what the CatalogSource the
	// controllers read serves.
	Image string
	// Bundles are the bundles pushed, by CSV name, as made from the catalog.
	Bundles map[string]olmtest.Bundle
}

// pushImageCatalog copies the catalog folder src, with quay.io/example/ rewritten to the
// registry, pushes a bundle image for every bundle the copy lists there (bundleFromCatalog),
// and pushes the copy as the catalog image repoTag.
func pushImageCatalog(t *testing.T, reg *olmtest.Registry, src, repoTag string) imageCatalog {
	t.Helper()
	out := imageCatalog{Dir: t.TempDir(), Bundles: map[string]olmtest.Bundle{}}
	prefix := reg.Host + "/" + strings.TrimPrefix(exampleImages, "quay.io/")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(out.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(strings.ReplaceAll(string(data), exampleImages, prefix)), 0o644)
	})
	if err != nil {
		t.Fatalf("copy catalog %s: %v", src, err)
	}
	c, err := catalog.LoadPath(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if errs := c.Problems.Errors(); len(errs) > 0 {
		t.Fatalf("catalog %s: %v", src, errs)
	}
	for _, p := range c.Packages {
		for _, b := range p.Bundles {
			if !strings.HasPrefix(b.Image, prefix) {
				continue
			}
			bundle, err := bundleFromCatalog(p, b)
			if err != nil {
				t.Fatalf("catalog %s: %v", src, err)
			}
			reg.PushBundle(t, strings.TrimPrefix(b.Image, reg.Host+"/"), bundle)
			out.Bundles[b.Name] = bundle
		}
	}
	if len(out.Bundles) == 0 {
		t.Fatalf("catalog %s lists no bundle at %s", src, exampleImages)
	}
	var fbc strings.Builder
	if err := catalog.WriteFBC(&fbc, c, catalog.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	out.Image, _ = reg.PushCatalog(t, repoTag, fbc.String())
	return out
}

// bundleFromCatalog is the bundle a catalog entry describes, for a bundle image that
// agrees with it: its name, package and version; the channels listing it, with the edges
// their entries give (one set: a bundle whose channels give it different edges is
// refused, as one CSV cannot carry both); from olm.csv.metadata its install modes,
// minKubeVersion and owned and required CRDs (each a CRD of the name's plural and group).
// The CSV gets olmtest's trivial Deployment and permission.
func bundleFromCatalog(p *catalog.Package, b *catalog.Bundle) (olmtest.Bundle, error) {
	out := olmtest.Bundle{Package: p.Name, Version: b.Version.String()}
	if out.Name() != b.Name {
		return out, fmt.Errorf("bundle %s: a CSV of package %s and version %s is named %s", b.Name, p.Name, out.Version, out.Name())
	}
	var edges *catalog.ChannelEntry
	for _, ch := range p.Channels {
		i := slices.IndexFunc(ch.Entries, func(e catalog.ChannelEntry) bool { return e.Name == b.Name })
		if i < 0 {
			continue
		}
		e := ch.Entries[i]
		if edges != nil && (e.Replaces != edges.Replaces || !slices.Equal(e.Skips, edges.Skips) || e.SkipRange != edges.SkipRange) {
			return out, fmt.Errorf("bundle %s: channels %s and %s give it different upgrade edges", b.Name, out.Channels[0], ch.Name)
		}
		edges = &e
		out.Channels = append(out.Channels, ch.Name)
	}
	if edges == nil {
		return out, fmt.Errorf("bundle %s is in no channel", b.Name)
	}
	out.Replaces, out.Skips, out.SkipRange = edges.Replaces, edges.Skips, edges.SkipRange
	props, err := b.Props()
	if err != nil {
		return out, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	m := props.Metadata
	if m == nil {
		return out, fmt.Errorf("bundle %s has no olm.csv.metadata to make its CSV from", b.Name)
	}
	out.InstallModes = []string{} // none supported unless the metadata says so (nil would be olmtest's default)
	for _, im := range m.InstallModes {
		if im.Supported {
			out.InstallModes = append(out.InstallModes, string(im.Type))
		}
	}
	out.MinKubeVersion = m.MinKubeVersion
	apis := func(descs []v1alpha1.CRDDescription) ([]olmtest.API, error) {
		var out []olmtest.API
		for _, d := range descs {
			plural, group, ok := strings.Cut(d.Name, ".")
			if !ok || plural == "" || group == "" || d.Version == "" || d.Kind == "" {
				return nil, fmt.Errorf("bundle %s: CRD %q (version %q, kind %q) is not <plural>.<group> with a version and a kind", b.Name, d.Name, d.Version, d.Kind)
			}
			out = append(out, olmtest.API{Group: group, Version: d.Version, Kind: d.Kind, Plural: plural})
		}
		return out, nil
	}
	if out.Owns, err = apis(m.CustomResourceDefinitions.Owned); err != nil {
		return out, err
	}
	if out.Requires, err = apis(m.CustomResourceDefinitions.Required); err != nil {
		return out, err
	}
	return out, nil
}
