package resolve

import (
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
)

// CatalogKey names a CatalogSource. Its JSON is {"name", "namespace"}.
type CatalogKey struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// String is "namespace/name", as OLM names a catalog source in its messages.
func (k CatalogKey) String() string { return k.Namespace + "/" + k.Name }

// Catalog is one CatalogSource and what it serves, as the caller loaded it with
// olm/catalog.
type Catalog struct {
	Name      string
	Namespace string
	// Priority is the CatalogSource's spec.priority: a higher priority is preferred when
	// choosing a dependency's provider.
	Priority int
	// Content is the catalog; nil when it could not be read.
	Content *catalog.Catalog
	// Err says why Content could not be read (an unreachable image, a broken file). As in
	// OLM, a namespace that sees a broken catalog resolves nothing: every Subscription there
	// fails with ErrorPreventedResolution, because a provider in that catalog could change
	// every choice.
	Err error
}

// Key is the catalog's name and namespace.
func (c Catalog) Key() CatalogKey { return CatalogKey{Name: c.Name, Namespace: c.Namespace} }

// Options configure a Resolver.
type Options struct {
	// GlobalNamespace is the catalog namespace every namespace sees, besides its own (OLM's
	// catalog operator --namespace: "olm" upstream, "openshift-marketplace" on OpenShift).
	// Empty means each namespace sees only its own catalogs.
	GlobalNamespace string
	// MaxSteps bounds the search for one namespace (and each step of explaining a failure);
	// zero means DefaultMaxSteps. A namespace that needs more fails with
	// ErrorPreventedResolution rather than hold a controller forever.
	MaxSteps int
}

// DefaultMaxSteps is the search bound when Options.MaxSteps is zero. Resolving every
// package of the 333-package community catalog takes at most a few hundred steps each.
const DefaultMaxSteps = 200_000

// Namespace is what is in one namespace: its Subscriptions (spec, and status.installedCSV),
// its ClusterServiceVersions (copied CSVs are ignored, as OLM ignores them) and whether its
// OperatorGroup hides the global catalogs.
type Namespace struct {
	Name          string
	Subscriptions []v1alpha1.Subscription
	CSVs          []v1alpha1.ClusterServiceVersion
	// ExcludeGlobalCatalogs is true when the namespace's OperatorGroup carries the annotation
	// olm.operatorframework.io/exclude-global-namespace-resolution: "true".
	ExcludeGlobalCatalogs bool
	// FailForward is true when the namespace's OperatorGroup has the
	// TechPreviewUnsafeFailForward upgrade strategy (FailForwardEnabled): Replacing CSVs
	// whose replacement chain ends in a Failed CSV are left out (HiddenByFailForward), so
	// that a bundle replacing the Failed CSV can be installed.
	FailForward bool
}

// ExcludeGlobalCatalogsAnnotation is the OperatorGroup annotation that hides the global
// catalog namespace from resolution in the group's namespace (set to "true").
const ExcludeGlobalCatalogsAnnotation = "olm.operatorframework.io/exclude-global-namespace-resolution"
