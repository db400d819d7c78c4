package extension

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	mmsemver "github.com/Masterminds/semver/v3"
	"github.com/blang/semver/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/olmsync/olmsync/olm/catalog"
)

// Catalog is a ClusterCatalog as the resolver sees it: its name, priority, labels and
// availability, and its content (the file-based catalog its image serves).
type Catalog struct {
	Name     string
	Priority int32
	Labels   map[string]string
	// Unavailable catalogs (spec.availabilityMode: Unavailable) are left out.
	Unavailable bool
	// Content is the catalog's content; Err why it could not be read.
	Content *catalog.Catalog
	Err     error
}

// CatalogOf turns a ClusterCatalog and its content into the resolver's Catalog; the name
// label OLM v1 puts on every ClusterCatalog is added, so selectors by name work.
func CatalogOf(cc *ClusterCatalog, content *catalog.Catalog, err error) Catalog {
	l := make(map[string]string, len(cc.Labels)+1)
	for k, v := range cc.Labels {
		l[k] = v
	}
	l[MetadataNameLabel] = cc.Name
	return Catalog{
		Name: cc.Name, Priority: cc.Spec.Priority, Labels: l,
		Unavailable: cc.Spec.AvailabilityMode == AvailabilityModeUnavailable,
		Content:     content, Err: err,
	}
}

// Why a catalog was not looked at (CatalogStat.Excluded).
const (
	ExcludedUnavailable = "Unavailable"
	ExcludedNotSelected = "NotSelected"
)

// CatalogStat is what resolution found in one catalog.
type CatalogStat struct {
	Name     string `json:"name"`
	Priority int32  `json:"priority"`
	// Excluded says why the catalog was not looked at: Unavailable, NotSelected.
	Excluded       string `json:"excluded,omitempty"`
	PackageFound   bool   `json:"packageFound"`
	TotalBundles   int    `json:"totalBundles"`
	MatchedBundles int    `json:"matchedBundles"`
	// Best is the bundle this catalog offers, when any matched.
	Best string `json:"best,omitempty"`
}

// How a resolved bundle relates to the installed one (Decision.Change).
const (
	ChangeInstall   = "Install"
	ChangeStay      = "Stay"
	ChangeUpgrade   = "Upgrade"
	ChangeDowngrade = "Downgrade"
)

// Decision is the bundle OLM v1 would install for a ClusterExtension, and how it got there.
type Decision struct {
	Package string
	// Bundle, Version and Image name the chosen bundle; Catalog the catalog it came from.
	Bundle, Version, Image, Catalog string
	// Channels are the channels listing the bundle, among those the extension names (all
	// of the package's when it names none).
	Channels []string
	// Deprecated is true when the package's deprecation entry names the bundle.
	Deprecated bool
	// Change is Install, Stay, Upgrade or Downgrade against the installed bundle; Edge is,
	// for an Upgrade under CatalogProvided, the catalog's edge that allows it
	// ("replaces X", "skips X", "skipRange R").
	Change, Edge string
}

// Resolve picks the bundle a ClusterExtension installs from the catalogs, as
// operator-controller's CatalogResolver does: catalogs by name, minus the Unavailable ones
// and those the selector leaves out; in each, the package's bundles in the named channels,
// in the version range and — under CatalogProvided, with a bundle installed — successors
// of the installed bundle (replaces, skips, skipRange of the considered channels) or the
// installed bundle itself; the highest version (non-deprecated first) of each catalog;
// across catalogs, non-deprecated over deprecated, then the highest priority. More than
// one at the top priority, or none, is OLM v1's resolution error. The error's text is
// OLM v1's own. The stats say what each catalog held, also when resolution fails.
func Resolve(ext *ClusterExtension, cats []Catalog) (*Decision, []CatalogStat, error) {
	src := ext.Spec.Source.Catalog
	if src == nil {
		return nil, nil, &Error{Message: fmt.Sprintf("spec.source.sourceType %q: only %q is supported, with spec.source.catalog", ext.Spec.Source.SourceType, SourceTypeCatalog)}
	}
	var installed *BundleMetadata
	if ext.Status.Install != nil && ext.Status.Install.Bundle.Name != "" {
		installed = &ext.Status.Install.Bundle
	}
	selector, err := metav1.LabelSelectorAsSelector(src.Selector)
	if err != nil {
		return nil, nil, &Error{Message: fmt.Sprintf("desired catalog selector is invalid: %v", err)}
	}
	if selector == labels.Nothing() { // a nil selector: every catalog
		selector = labels.Everything()
	}
	var inRange func(semver.Version) bool
	if src.Version != "" {
		c, err := mmsemver.NewConstraint(src.Version)
		if err != nil {
			return nil, nil, &Error{Message: fmt.Sprintf("desired version range %q is invalid: %v", src.Version, err)}
		}
		inRange = func(v semver.Version) bool {
			pre := make([]string, len(v.Pre))
			for i, p := range v.Pre {
				pre[i] = p.String()
			}
			return c.Check(mmsemver.New(v.Major, v.Minor, v.Patch, strings.Join(pre, "."), strings.Join(v.Build, ".")))
		}
	}
	// OLM v1 lists the ClusterCatalogs through the API server: by name.
	sorted := slices.Clone(cats)
	slices.SortFunc(sorted, func(a, b Catalog) int { return cmp.Compare(a.Name, b.Name) })

	var stats []CatalogStat
	var found []candidate
	for _, cat := range sorted {
		st := CatalogStat{Name: cat.Name, Priority: cat.Priority}
		switch {
		case cat.Unavailable:
			st.Excluded = ExcludedUnavailable
			stats = append(stats, st)
			continue
		case !selector.Matches(labels.Set(cat.Labels)):
			st.Excluded = ExcludedNotSelected
			stats = append(stats, st)
			continue
		}
		stats = append(stats, st)
		if cat.Err != nil {
			return nil, stats, &Error{Message: fmt.Sprintf("error walking catalogs: error getting package %q from catalog %q: %v", src.PackageName, cat.Name, cat.Err)}
		}
		var pkg *catalog.Package
		if cat.Content != nil {
			pkg = cat.Content.Package(src.PackageName)
		}
		if pkg == nil {
			continue
		}
		s := &stats[len(stats)-1]
		s.PackageFound, s.TotalBundles = true, len(pkg.Bundles)
		c, n, err := bestOf(pkg, src, inRange, installed)
		if err != nil {
			return nil, stats, err
		}
		s.MatchedBundles = n
		if c == nil {
			continue
		}
		c.catalog, c.priority = cat.Name, cat.Priority
		s.Best = c.bundle.Name
		if len(found) > 0 {
			prior := found[len(found)-1].deprecated
			if c.deprecated && !prior {
				continue // a deprecated candidate never displaces a non-deprecated one
			}
			if !c.deprecated && prior {
				found = found[:0]
			}
		}
		found = append(found, *c)
	}
	if len(found) > 1 {
		slices.SortStableFunc(found, func(a, b candidate) int { return cmp.Compare(b.priority, a.priority) })
		if found[0].priority != found[1].priority {
			found = found[:1]
		}
	}
	if len(found) != 1 {
		return nil, stats, newResolutionError(src, installed, found)
	}
	if err := noDependencies(found[0].bundle); err != nil {
		return nil, stats, err
	}
	return decide(src, installed, found[0]), stats, nil
}

// candidate is the best bundle of one catalog.
type candidate struct {
	bundle     *catalog.Bundle
	version    versionRelease
	deprecated bool
	channels   []string
	edge       string
	catalog    string
	priority   int32
}

// bestOf filters one catalog's bundles of the package and returns the best, and how many
// matched.
func bestOf(pkg *catalog.Package, src *CatalogFilter, inRange func(semver.Version) bool, installed *BundleMetadata) (*candidate, int, error) {
	channels := pkg.Channels
	if len(src.Channels) > 0 {
		channels = slices.DeleteFunc(slices.Clone(pkg.Channels), func(c *catalog.Channel) bool { return !slices.Contains(src.Channels, c.Name) })
	}
	var successor func(*catalog.Bundle, versionRelease, bool) (string, bool)
	if installed != nil && src.UpgradeConstraintPolicy != UpgradeConstraintPolicySelfCertified {
		var err error
		if successor, err = successorsOf(*installed, channels); err != nil {
			return nil, 0, &Error{Message: "error walking catalogs: error finding upgrade edges: " + err.Error()}
		}
	}
	deprecated := map[string]bool{}
	for _, d := range pkg.Deprecations {
		if d.Reference.Schema == "olm.bundle" {
			deprecated[d.Reference.Name] = true
		}
	}
	var matched []candidate
	for _, b := range pkg.Bundles {
		vr, err := bundleVersion(b)
		if len(src.Channels) > 0 && len(channelsOf(b.Name, channels)) == 0 {
			continue
		}
		if inRange != nil && (err != nil || !inRange(vr.version)) {
			continue
		}
		edge := ""
		if successor != nil {
			var ok bool
			if edge, ok = successor(b, vr, err == nil); !ok {
				continue
			}
		}
		if err != nil {
			vr = versionRelease{} // sorted below every valid version, as OLM v1 sorts it
		}
		matched = append(matched, candidate{bundle: b, version: vr, deprecated: deprecated[b.Name], channels: channelsOf(b.Name, channels), edge: edge})
	}
	if len(matched) == 0 {
		return nil, 0, nil
	}
	slices.SortStableFunc(matched, func(a, b candidate) int {
		if a.deprecated != b.deprecated {
			if a.deprecated {
				return 1
			}
			return -1
		}
		return b.version.compare(a.version)
	})
	return &matched[0], len(matched), nil
}

func channelsOf(bundle string, channels []*catalog.Channel) []string {
	var out []string
	for _, c := range channels {
		if slices.ContainsFunc(c.Entries, func(e catalog.ChannelEntry) bool { return e.Name == bundle }) {
			out = append(out, c.Name)
		}
	}
	return out
}

// successorsOf is OLM v1's CatalogProvided rule: a bundle may follow the installed one when
// an entry of a considered channel replaces it, skips it or has a skipRange (read with
// blang's ranges, as OLM v0 did) holding its version, or when it is the installed version
// itself. It returns the edge that allows the bundle ("" for the installed version).
func successorsOf(installed BundleMetadata, channels []*catalog.Channel) (func(*catalog.Bundle, versionRelease, bool) (string, bool), error) {
	var inst versionRelease
	var err error
	if installed.Release == nil {
		if inst, err = legacyVersionRelease(installed.Version); err != nil {
			return nil, fmt.Errorf("failed to get version and release of installed bundle: %w", err)
		}
	} else {
		v, perr := semver.Parse(installed.Version)
		if perr != nil {
			return nil, fmt.Errorf("failed to parse installed bundle version and release: error parsing version %q: %w", installed.Version, perr)
		}
		rel, ok := parseRelease(*installed.Release)
		if !ok {
			return nil, fmt.Errorf("failed to parse installed bundle version and release: error parsing release %q", *installed.Release)
		}
		inst = versionRelease{version: v, release: rel}
	}
	plain, err := semver.Parse(installed.Version)
	if err != nil {
		return nil, fmt.Errorf("getting successorsPredicate: error parsing installed bundle version: %w", err)
	}
	edgeOf := func(e catalog.ChannelEntry) string {
		if e.Replaces == installed.Name {
			return "replaces " + installed.Name
		}
		if slices.Contains(e.Skips, installed.Name) {
			return "skips " + installed.Name
		}
		if e.SkipRange != "" {
			if r, err := semver.ParseRange(e.SkipRange); err == nil && r(plain) {
				return "skipRange " + e.SkipRange
			}
		}
		return ""
	}
	return func(b *catalog.Bundle, vr versionRelease, valid bool) (string, bool) {
		for _, c := range channels {
			for _, e := range c.Entries {
				if e.Name == b.Name {
					if edge := edgeOf(e); edge != "" {
						return edge, true
					}
				}
			}
		}
		return "", valid && vr.compare(inst) == 0
	}, nil
}

// noDependencies is OLM v1's NoDependencyValidation: it installs no dependencies, so a
// bundle that declares one is refused.
func noDependencies(b *catalog.Bundle) error {
	for _, p := range b.Properties {
		switch p.Type {
		case catalog.PropertyPackageRequired, catalog.PropertyGVKRequired, catalog.PropertyConstraint:
			return &Error{Message: fmt.Sprintf("validating bundle %q: bundle %q has a dependency declared via property %q which is currently not supported", b.Name, b.Name, p.Type)}
		}
	}
	return nil
}

func decide(src *CatalogFilter, installed *BundleMetadata, c candidate) *Decision {
	d := &Decision{
		Package: src.PackageName, Bundle: c.bundle.Name, Version: c.version.String(), Image: c.bundle.Image,
		Catalog: c.catalog, Channels: c.channels, Deprecated: c.deprecated, Change: ChangeInstall,
	}
	if installed == nil {
		return d
	}
	inst, err := legacyVersionRelease(installed.Version)
	switch {
	case c.bundle.Name == installed.Name || (err == nil && c.version.compare(inst) == 0):
		d.Change = ChangeStay
	case err == nil && c.version.compare(inst) < 0:
		d.Change = ChangeDowngrade
	default:
		d.Change, d.Edge = ChangeUpgrade, c.edge
	}
	return d
}

// Error is a resolution that fails before or after the catalogs are searched, with OLM
// v1's words.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

// ResolutionError is OLM v1's resolution failure: no bundle found, or bundles of the same
// priority in several catalogs.
type ResolutionError struct {
	Package   string
	Version   string
	Channels  []string
	Installed *BundleMetadata
	// Catalogs are the catalogs whose bundles tie (more than one), or nil.
	Catalogs []string
}

func newResolutionError(src *CatalogFilter, installed *BundleMetadata, found []candidate) *ResolutionError {
	e := &ResolutionError{Package: src.PackageName, Version: src.Version, Channels: src.Channels, Installed: installed}
	if len(found) > 1 {
		for _, f := range found {
			e.Catalogs = append(e.Catalogs, f.catalog)
		}
		slices.Sort(e.Catalogs)
	}
	return e
}

// Error is the message OLM v1 sets on the ClusterExtension, in its clause order.
func (e *ResolutionError) Error() string {
	var sb strings.Builder
	if e.Installed != nil {
		fmt.Fprintf(&sb, "error upgrading from currently installed version %q: ", e.Installed.Version)
	}
	if len(e.Catalogs) > 1 {
		fmt.Fprintf(&sb, "found bundles for package %q ", e.Package)
	} else {
		fmt.Fprintf(&sb, "no bundles found for package %q ", e.Package)
	}
	if e.Version != "" {
		fmt.Fprintf(&sb, "matching version %q ", e.Version)
	}
	if len(e.Channels) > 0 {
		fmt.Fprintf(&sb, "in channels %v ", e.Channels)
	}
	if len(e.Catalogs) > 1 {
		fmt.Fprintf(&sb, "in multiple catalogs with the same priority %v ", e.Catalogs)
	}
	return strings.TrimSpace(sb.String())
}
