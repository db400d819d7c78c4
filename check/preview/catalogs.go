package preview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// CatalogSpec names a catalog the preview resolves against: the CatalogSource it stands
// for and where its content is.
type CatalogSpec struct {
	// Name and Namespace of the CatalogSource; an empty Namespace is the marketplace
	// namespace of the cluster (policy.marketplaceNamespace).
	Name      string
	Namespace string
	// Source is a local path, a path in the repository, or an image reference.
	Source string
	// FromConfig is true for a catalog of olmsync.yaml, whose Source is read from the
	// revision (never from the local disk); Line is where it is written there.
	FromConfig bool
	Line       int
}

// String is the spec as `--catalog` writes it.
func (c CatalogSpec) String() string {
	name := c.Name
	if c.Namespace != "" {
		name += "/" + c.Namespace
	}
	return name + "=" + sources.RedactURLs(c.Source)
}

// ParseCatalogFlag reads `--catalog NAME[/NAMESPACE]=SRC`.
func ParseCatalogFlag(s string) (CatalogSpec, error) {
	key, src, ok := strings.Cut(s, "=")
	if !ok || key == "" || src == "" {
		return CatalogSpec{}, fmt.Errorf("--catalog %q: want NAME[/NAMESPACE]=SRC (a folder, a path in the repository or an image reference)", s)
	}
	name, ns, _ := strings.Cut(key, "/")
	if name == "" || strings.Contains(ns, "/") {
		return CatalogSpec{}, fmt.Errorf("--catalog %q: want NAME[/NAMESPACE]=SRC", s)
	}
	return CatalogSpec{Name: name, Namespace: ns, Source: src}, nil
}

// loadedCatalog is a catalog's content, or why it could not be read.
type loadedCatalog struct {
	content *catalog.Catalog
	err     error
}

// catalogCache keeps what was read from outside the revision (local folders, images) for
// the life of a Stage: the base and the head revision of a pull request share it.
type catalogCache struct {
	mu    sync.Mutex
	byKey map[string]*loadedCatalog
}

func (c *catalogCache) get(key string, load func() (*catalog.Catalog, error)) *loadedCatalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.byKey[key]; ok {
		return l
	}
	content, err := load()
	l := &loadedCatalog{content: content, err: err}
	if c.byKey == nil {
		c.byKey = map[string]*loadedCatalog{}
	}
	c.byKey[key] = l
	return l
}

// catalogSpecs are the catalogs of olmsync.yaml followed by those of the flags; a flag
// naming the same catalog as the config wins.
func catalogSpecs(cfg *render.Config, flags []CatalogSpec) []CatalogSpec {
	var out []CatalogSpec
	if cfg != nil {
		for _, c := range cfg.Catalogs {
			out = append(out, CatalogSpec{Name: c.Name, Namespace: c.Namespace, Source: c.Source, FromConfig: true, Line: c.Line})
		}
	}
	for _, f := range flags {
		for i := range out {
			if out[i].Name == f.Name && out[i].Namespace == f.Namespace {
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
		out = append(out, f)
	}
	return out
}

// load reads one catalog. A flag's source is a local path when one exists, else a path in
// the repository, else an image reference; a source of olmsync.yaml is a path in the
// repository or a registry image, never a file of the machine running the check.
func (s *Stage) load(ctx context.Context, tree *sources.Tree, spec CatalogSpec) *loadedCatalog {
	src := spec.Source
	if !spec.FromConfig {
		if _, err := os.Stat(src); err == nil {
			return s.cache.get("path:"+src, func() (*catalog.Catalog, error) { return catalog.LoadPath(src) })
		}
	}
	if rel, ok := repositoryPath(tree, src); ok {
		// Read from the revision itself: not cached, since base and head may differ. A
		// file (a ConfigMap catalog, a package manifest) is read from its folder.
		dir, name := rel, "."
		if !tree.FS.IsDir(tree.Abs(rel)) {
			dir, name = path.Dir(rel), path.Base(rel)
		}
		c, err := catalog.LoadFS(check.TreeFS(tree, tree.Abs(dir)), name)
		return &loadedCatalog{content: c, err: err}
	}
	if spec.FromConfig && !catalogImage(src) {
		return &loadedCatalog{err: fmt.Errorf("%s is neither a folder of the repository nor an image reference naming its registry", src)}
	}
	return s.cache.get("ref:"+src, func() (*catalog.Catalog, error) {
		return catalog.Load(ctx, src, catalog.LoadOptions{Image: s.opts.Image})
	})
}

// repositoryPath is src as a path of the repository, when it names a file or folder there.
func repositoryPath(tree *sources.Tree, src string) (string, bool) {
	if tree == nil || path.IsAbs(src) {
		return "", false
	}
	rel := path.Clean(strings.TrimPrefix(src, "./"))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, tree.FS.Exists(tree.Abs(rel))
}

// catalogImage reports whether s is an image reference that names its registry (what
// catalog.Load pulls), as opposed to an oci: layout on disk.
func catalogImage(s string) bool {
	host, rest, ok := strings.Cut(s, "/")
	return ok && rest != "" && !strings.HasPrefix(s, "oci:") && (strings.ContainsAny(host, ".:") || host == "localhost")
}

// catalogProblem is the problem of a catalog that could not be read: the check cannot
// say what Subscriptions of that catalog install.
func catalogProblem(spec CatalogSpec, err error) report.Problem {
	// The source, and the errors that repeat it, may hold a URL's credentials
	// (--catalog NAME=https://user:password@host/...): never shown.
	p := report.Problem{Message: sources.RedactURLs(fmt.Sprintf("olm preview: catalog %s: %v", spec, err))}
	if spec.FromConfig {
		p.File, p.Line = render.ConfigFileName, spec.Line
	}
	var notExist *os.PathError
	if errors.As(err, &notExist) && !spec.FromConfig {
		p.Message = sources.RedactURLs(fmt.Sprintf("olm preview: --catalog %s: %v", spec, err))
	}
	return p
}
