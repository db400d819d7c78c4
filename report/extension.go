package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// ClusterExtensionPreview is what the OLM preview predicts for one OLM v1 ClusterExtension
// (olm.operatorframework.io/v1) declared in Git: the ClusterCatalogs it looked at and the
// bundle OLM v1's resolver picks from them, or OLM v1's own message when it picks none.
type ClusterExtensionPreview struct {
	// Cluster, App, File and Line locate the ClusterExtension in the checked revision.
	Cluster string `json:"cluster,omitempty"`
	App     string `json:"app"`
	File    string `json:"file"`
	Line    int    `json:"line"`

	Name string `json:"name"`
	// Namespace is spec.namespace, where the extension's namespaced objects go;
	// ServiceAccount spec.serviceAccount.name, when given.
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Package, Version (the range), Channels and UpgradeConstraintPolicy are
	// spec.source.catalog's (the policy CatalogProvided when the field is empty).
	Package                 string   `json:"package"`
	Version                 string   `json:"version,omitempty"`
	Channels                []string `json:"channels"`
	UpgradeConstraintPolicy string   `json:"upgradeConstraintPolicy"`
	// Installed is status.install.bundle of the cluster state's ClusterExtension.
	Installed *InstalledBundle `json:"installed,omitempty"`
	// Catalogs are the ClusterCatalogs the resolver was given, by name.
	Catalogs   []ExtensionCatalog  `json:"catalogs"`
	Resolution ExtensionResolution `json:"resolution"`
}

// ID is the ClusterExtension's name (it is cluster-scoped).
func (e ClusterExtensionPreview) ID() string { return e.Name }

// InstalledBundle is the bundle OLM v1 reports installed.
type InstalledBundle struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// FromBase: the cluster state did not say; this is what the pull request's base
	// revision resolves to, taken as installed once the base is applied.
	FromBase bool `json:"fromBase,omitempty"`
}

// ExtensionCatalog is one ClusterCatalog as the resolver saw it.
type ExtensionCatalog struct {
	Name     string `json:"name"`
	Image    string `json:"image,omitempty"`
	Priority int32  `json:"priority"`
	// Excluded says why it was left out: Unavailable (spec.availabilityMode) or
	// NotSelected (the extension's catalog selector).
	Excluded       string `json:"excluded,omitempty"`
	PackageFound   bool   `json:"packageFound"`
	TotalBundles   int    `json:"totalBundles"`
	MatchedBundles int    `json:"matchedBundles"`
	// Best is the bundle this catalog offers.
	Best string `json:"best,omitempty"`
}

// Statuses of ExtensionResolution.
const (
	ExtensionResolved = "Resolved"
	ExtensionFailed   = "Failed"
	ExtensionUnknown  = "Unknown"
)

// ExtensionResolution is OLM v1's decision: the bundle, or the message it fails with.
type ExtensionResolution struct {
	// Status is Resolved, Failed or Unknown (not previewed: Message says why).
	Status  string `json:"status"`
	Bundle  string `json:"bundle,omitempty"`
	Version string `json:"version,omitempty"`
	Image   string `json:"image,omitempty"`
	Catalog string `json:"catalog,omitempty"`
	// Channels list the bundle, among those the extension names (all when none).
	Channels   []string `json:"channels"`
	Deprecated bool     `json:"deprecated,omitempty"`
	// Change is Install, Stay, Upgrade or Downgrade against Installed; Edge the catalog's
	// upgrade edge that allows an Upgrade under CatalogProvided.
	Change  string `json:"change,omitempty"`
	Edge    string `json:"edge,omitempty"`
	Message string `json:"message,omitempty"`
}

// extensionSentence says in one line what OLM v1 does with the extension.
func extensionSentence(e ClusterExtensionPreview) string {
	r := e.Resolution
	var b strings.Builder
	switch r.Status {
	case ExtensionUnknown:
		return "not previewed: " + r.Message
	case ExtensionFailed:
		fmt.Fprintf(&b, "cannot be resolved: %s", r.Message)
	default:
		switch r.Change {
		case "Stay":
			fmt.Fprintf(&b, "stays on %s %s", r.Bundle, r.Version)
		case "Upgrade":
			fmt.Fprintf(&b, "upgrades %s → %s %s", e.Installed.Name, r.Bundle, r.Version)
			if r.Edge != "" {
				fmt.Fprintf(&b, " (%s)", r.Edge)
			} else {
				b.WriteString(" (SelfCertified)")
			}
		case "Downgrade":
			fmt.Fprintf(&b, "downgrades %s → %s %s (SelfCertified)", e.Installed.Name, r.Bundle, r.Version)
		default:
			fmt.Fprintf(&b, "installs %s %s", r.Bundle, r.Version)
		}
		fmt.Fprintf(&b, " from ClusterCatalog %s", r.Catalog)
		if len(r.Channels) > 0 {
			fmt.Fprintf(&b, ", channel %s", strings.Join(r.Channels, ", "))
		}
		if r.Image != "" {
			fmt.Fprintf(&b, ", image %s", r.Image)
		}
		if r.Deprecated {
			b.WriteString("; the bundle is deprecated")
		}
	}
	var asked []string
	if e.Version != "" {
		asked = append(asked, "version "+e.Version)
	}
	if len(e.Channels) > 0 {
		asked = append(asked, "channels "+strings.Join(e.Channels, ", "))
	}
	asked = append(asked, e.UpgradeConstraintPolicy)
	fmt.Fprintf(&b, " [package %s, %s; into namespace %s]", e.Package, strings.Join(asked, ", "), e.Namespace)
	return b.String()
}

// catalogsSentence lists the catalogs considered.
func catalogsSentence(cs []ExtensionCatalog) string {
	if len(cs) == 0 {
		return "no ClusterCatalogs"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		s := fmt.Sprintf("%s (priority %d", c.Name, c.Priority)
		switch {
		case c.Excluded != "":
			s += ", " + c.Excluded
		case !c.PackageFound:
			s += ", no such package"
		default:
			s += fmt.Sprintf(", %d of %d bundles match", c.MatchedBundles, c.TotalBundles)
		}
		parts[i] = s + ")"
	}
	return "catalogs: " + strings.Join(parts, "; ")
}

func completeExtensions(r *Report) {
	for i := range r.ClusterExtensions {
		e := &r.ClusterExtensions[i]
		e.File = cleanPath(e.File)
		e.Channels = nonNil(e.Channels)
		e.Catalogs = nonNil(e.Catalogs)
		e.Resolution.Channels = nonNil(e.Resolution.Channels)
	}
	slices.SortStableFunc(r.ClusterExtensions, func(a, b ClusterExtensionPreview) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Name, b.Name))
	})
}

func (t *textWriter) extensions(r *Report) {
	for _, e := range r.ClusterExtensions {
		head := "  ClusterExtension " + plain(e.Name)
		var tags []string
		if e.Cluster != "" {
			tags = append(tags, "cluster "+e.Cluster)
		}
		if loc := location(e.File, e.Line); loc != "" {
			tags = append(tags, loc)
		}
		if len(tags) > 0 {
			head += "  (" + plain(strings.Join(tags, ", ")) + ")"
		}
		code := ansiGreen
		switch e.Resolution.Status {
		case ExtensionFailed:
			code = ansiRed
		case ExtensionUnknown:
			code = ansiYellow
		}
		t.print(head + "\n" + t.style(code, indentLines(plain(extensionSentence(e)), "      ")) + "\n")
		t.print(indentLines(plain(catalogsSentence(e.Catalogs)), "      ") + "\n")
	}
}

func (m *mdWriter) extensions(r *Report) {
	if len(r.ClusterExtensions) == 0 {
		return
	}
	m.printf("\n#### OLM v1 preview\n\n| ClusterExtension | Location | What OLM v1 does | Catalogs |\n|---|---|---|---|\n")
	for i, e := range r.ClusterExtensions {
		if i == m.rows {
			m.moreRows(len(r.ClusterExtensions) - i)
			break
		}
		name := e.Name
		if e.Cluster != "" {
			name = e.Cluster + ": " + name
		}
		what := mdText(truncate(extensionSentence(e), maxCellMessage))
		if e.Resolution.Status == ExtensionFailed {
			what = "❌ " + what
		}
		m.printf("| %s | %s | %s | %s |\n", mdCode(name), m.link(e.File, e.Line), what,
			mdText(truncate(catalogsSentence(e.Catalogs), maxCellMessage)))
	}
}
