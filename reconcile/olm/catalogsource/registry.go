package catalogsource

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/reconcile/olm/metrics"
)

// Entry is what the registry holds for one CatalogSource.
type Entry struct {
	// Content is the last catalog read successfully; nil when none was ever read.
	Content *catalog.Catalog
	// Priority is the CatalogSource's spec.priority.
	Priority int
	// Revision names the content: the image digest, or the ConfigMap's UID and resourceVersion.
	Revision string
	// LoadedAt is when Content was read.
	LoadedAt time.Time
	// Err says why the source could not be read at its last attempt; Content, when set, is
	// then the last good content, served on.
	Err error
}

// Registry holds the catalogs the CatalogSource controller loaded, by CatalogSource. It is
// safe for concurrent use.
type Registry struct {
	// GlobalNamespace is the catalog namespace every namespace sees besides its own (OLM's
	// catalog operator --namespace: "olm", "openshift-marketplace"). Empty: none.
	GlobalNamespace string

	mu       sync.RWMutex
	entries  map[types.NamespacedName]Entry
	revision uint64
	resolver *resolve.Resolver
	// resolverRevision is the revision resolver was built at.
	resolverRevision uint64
	// resolverOpts are the options resolvers are built with (GlobalNamespace set from the registry).
	resolverOpts resolve.Options
}

// NewRegistry returns an empty registry whose resolvers use opts (GlobalNamespace is taken from
// globalNamespace).
func NewRegistry(globalNamespace string, opts resolve.Options) *Registry {
	opts.GlobalNamespace = globalNamespace
	return &Registry{GlobalNamespace: globalNamespace, entries: map[types.NamespacedName]Entry{}, resolverOpts: opts}
}

// Get returns the entry of one CatalogSource.
func (r *Registry) Get(key types.NamespacedName) (Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[key]
	return e, ok
}

// Loaded reports whether the registry holds content of the CatalogSource key: read by this
// process, now or at an earlier attempt (a source that could not be read since serves its
// last good content).
func (r *Registry) Loaded(key types.NamespacedName) bool {
	e, ok := r.Get(key)
	return ok && e.Content != nil
}

// Set stores the entry of one CatalogSource.
func (r *Registry) Set(key types.NamespacedName, e Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries[key] = e
	r.revision++
}

// Delete forgets a CatalogSource.
func (r *Registry) Delete(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[key]; ok {
		delete(r.entries, key)
		r.revision++
	}
}

// Revision counts the changes to the registry; a caller that cached something built from it
// rebuilds when the revision moved.
func (r *Registry) Revision() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.revision
}

// Catalogs returns every catalog as the resolver takes it, sorted by namespace and name. A
// source that failed but has content gives its last good content and no error (it is served
// on); one that never loaded gives its error, so that resolution in the namespaces that see it
// fails with ErrorPreventedResolution rather than deciding without it.
func (r *Registry) Catalogs() []resolve.Catalog {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.catalogsLocked()
}

func (r *Registry) catalogsLocked() []resolve.Catalog {
	out := make([]resolve.Catalog, 0, len(r.entries))
	for key, e := range r.entries {
		c := resolve.Catalog{Name: key.Name, Namespace: key.Namespace, Priority: e.Priority, Content: e.Content}
		if e.Content == nil {
			c.Err = e.Err
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b resolve.Catalog) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// Visible returns the catalogs a namespace sees: its own and the global namespace's.
func (r *Registry) Visible(namespace string) []resolve.Catalog {
	var out []resolve.Catalog
	for _, c := range r.Catalogs() {
		if c.Namespace == namespace || (r.GlobalNamespace != "" && c.Namespace == r.GlobalNamespace) {
			out = append(out, c)
		}
	}
	return out
}

// Resolver returns a resolver over every catalog, and the registry revision it was built at.
// It is built once per revision (indexing a large catalog is not free) and may be used from
// several goroutines.
func (r *Registry) Resolver() (*resolve.Resolver, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resolver == nil || r.resolverRevision != r.revision {
		catalogs := r.catalogsLocked()
		// Each catalog's content is taken anew into the resolver: OLM's resolver cache
		// requesting a snapshot of each source.
		for _, c := range catalogs {
			metrics.CatalogSourceSnapshotsTotal.WithLabelValues(c.Namespace, c.Name).Inc()
		}
		r.resolver = resolve.New(catalogs, r.resolverOpts)
		r.resolverRevision = r.revision
	}
	return r.resolver, r.revision
}

// FindBundle looks a bundle up by CSV name in the catalogs namespace sees, preferring the
// catalog named by source (namespace/name, optional), then OLM's catalog order: the
// namespace's own catalogs before the global ones, higher priority first, then by name. It
// returns the bundle and the catalog it came from.
func (r *Registry) FindBundle(namespace, csvName string, source types.NamespacedName) (*catalog.Bundle, types.NamespacedName, bool) {
	cats := r.Visible(namespace)
	slices.SortStableFunc(cats, func(a, b resolve.Catalog) int {
		rank := func(c resolve.Catalog) int {
			switch {
			case c.Name == source.Name && c.Namespace == source.Namespace:
				return 0
			case c.Namespace == namespace:
				return 1
			}
			return 2
		}
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Name, b.Name))
	})
	for _, c := range cats {
		if c.Content == nil {
			continue
		}
		for _, p := range c.Content.Packages {
			for _, b := range p.Bundles {
				if b.Name == csvName {
					return b, types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, true
				}
			}
		}
	}
	return nil, types.NamespacedName{}, false
}
