package preview

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/extension"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// extensionEntry is an OLM v1 ClusterExtension of the view: its spec from Git when Git
// declares it, its status (status.install.bundle) from the cluster state.
type extensionEntry struct {
	ext extension.ClusterExtension
	git *gitRef
	// fromBase: status.install is the base revision's resolution (assumeBaseExtensions).
	fromBase bool
}

// clusterCatalogEntry is an OLM v1 ClusterCatalog of the view.
type clusterCatalogEntry struct {
	cc  extension.ClusterCatalog
	git *gitRef
}

func (v *view) addV1State(st *ClusterState) {
	for i := range st.ClusterExtensions {
		v.extensions = append(v.extensions, &extensionEntry{ext: st.ClusterExtensions[i]})
	}
	for i := range st.ClusterCatalogs {
		v.clusterCatalogs = append(v.clusterCatalogs, &clusterCatalogEntry{cc: st.ClusterCatalogs[i]})
	}
}

// addV1 lays a ClusterExtension or ClusterCatalog of Git over the view. One that does not
// decode, or has fields OLM v1's API does not know, is a warning on its file and line:
// the API server would refuse it.
func (v *view) addV1(app string, o policy.Object) {
	kind, _ := o.Object["kind"].(string)
	warn := func(msg string) {
		v.warnings = append(v.warnings, report.Warning{File: o.Source.File, Line: o.Source.Line, Apps: []string{app},
			Message: "olm preview: " + msg})
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return
	}
	d, err := extension.Decode(data)
	if errors.Is(err, extension.ErrNotV1Kind) {
		return
	}
	if err != nil {
		warn(fmt.Sprintf("%s left out: %v", kind, err))
		return
	}
	ref := &gitRef{app: app, file: o.Source.File, line: o.Source.Line}
	if d.Extension != nil {
		ref.ref = policy.ObjectRef{APIVersion: extension.APIVersion, Kind: kind, Name: d.Extension.Name}
	} else {
		ref.ref = policy.ObjectRef{APIVersion: extension.APIVersion, Kind: kind, Name: d.Catalog.Name}
	}
	if len(d.UnknownFields) > 0 {
		warn(fmt.Sprintf("%s %q: %s (OLM v1's API has no such field; the API server refuses it)", kind, ref.ref.Name, strings.Join(d.UnknownFields, ", ")))
	}
	if x := d.Extension; x != nil {
		for _, e := range v.extensions {
			if e.ext.Name == x.Name {
				status := e.ext.Status
				e.ext, e.git = *x, ref
				e.ext.Status = status
				return
			}
		}
		x.Status = extension.ClusterExtensionStatus{}
		v.extensions = append(v.extensions, &extensionEntry{ext: *x, git: ref})
		return
	}
	x := d.Catalog
	v.clusterCatalogs = slices.DeleteFunc(v.clusterCatalogs, func(c *clusterCatalogEntry) bool { return c.cc.Name == x.Name })
	v.clusterCatalogs = append(v.clusterCatalogs, &clusterCatalogEntry{cc: *x, git: ref})
}

// previewExtensions resolves every ClusterExtension of Git against the cluster's
// ClusterCatalogs (Git's laid over the state's), each catalog's content being the
// `--catalog` or olmsync.yaml catalog of the same name (no namespace), else its image
// pulled. A catalog that cannot be read is a problem of the check; its extensions are
// not previewed.
func (s *Stage) previewExtensions(ctx context.Context, tree *sources.Tree, v *view, p *clusterPreview, specs []CatalogSpec, loaded []*loadedCatalog) {
	if s.opts.Base != nil {
		assumeBaseExtensions(v, s.opts.Base.extensionsOf(p.name))
	}
	var gitExts []*extensionEntry
	for _, e := range v.extensions {
		if e.git != nil {
			gitExts = append(gitExts, e)
		}
	}
	if len(gitExts) == 0 {
		return
	}
	slices.SortFunc(v.clusterCatalogs, func(a, b *clusterCatalogEntry) int { return cmp.Compare(a.cc.Name, b.cc.Name) })
	cats := make([]extension.Catalog, 0, len(v.clusterCatalogs))
	listed := make([]report.ExtensionCatalog, 0, len(v.clusterCatalogs))
	var unread []string
	for _, c := range v.clusterCatalogs {
		content, err := s.clusterCatalogContent(ctx, tree, &c.cc, specs, loaded)
		if err != nil {
			unread = append(unread, c.cc.Name)
			p.problems = append(p.problems, report.Problem{File: refFile(c.git), Line: refLine(c.git),
				Message: fmt.Sprintf("olm preview: ClusterCatalog %s: %v", c.cc.Name, err)})
		}
		cats = append(cats, extension.CatalogOf(&c.cc, content, err))
		ec := report.ExtensionCatalog{Name: c.cc.Name, Priority: c.cc.Spec.Priority}
		if img := c.cc.Spec.Source.Image; img != nil {
			ec.Image = img.Ref
		}
		listed = append(listed, ec)
	}
	for _, e := range gitExts {
		p.exts = append(p.exts, p.previewExtension(e, cats, listed, unread))
	}
}

func (p *clusterPreview) previewExtension(e *extensionEntry, cats []extension.Catalog, listed []report.ExtensionCatalog, unread []string) report.ClusterExtensionPreview {
	x := &e.ext
	ep := report.ClusterExtensionPreview{
		Cluster: p.name, App: e.git.app, File: e.git.file, Line: e.git.line,
		Name: x.Name, Namespace: x.Spec.Namespace, ServiceAccount: x.Spec.ServiceAccount.Name,
		Catalogs: slices.Clone(listed),
	}
	if c := x.Spec.Source.Catalog; c != nil {
		ep.Package, ep.Version, ep.Channels = c.PackageName, c.Version, slices.Clone(c.Channels)
		ep.UpgradeConstraintPolicy = string(cmp.Or(c.UpgradeConstraintPolicy, extension.UpgradeConstraintPolicyCatalogProvided))
	}
	if in := x.Status.Install; in != nil && in.Bundle.Name != "" {
		ep.Installed = &report.InstalledBundle{Name: in.Bundle.Name, Version: in.Bundle.Version, FromBase: e.fromBase}
	}
	switch {
	case len(unread) > 0:
		ep.Resolution = report.ExtensionResolution{Status: report.ExtensionUnknown, Message: fmt.Sprintf(
			"ClusterCatalog %s could not be read", strings.Join(unread, ", "))}
		return ep
	case len(cats) == 0:
		ep.Resolution = report.ExtensionResolution{Status: report.ExtensionUnknown, Message: "the preview knows no ClusterCatalog " +
			"(none in Git nor in the cluster state)"}
		p.violate(e.git, RuleNoClusterCatalog, policy.SeverityWarning, fmt.Sprintf(
			"ClusterExtension %s: the preview knows no ClusterCatalog; declare the ClusterCatalogs in Git or give the cluster's with --cluster-state", x.Name))
		return ep
	}
	d, stats, err := extension.Resolve(x, cats)
	for _, st := range stats {
		for i := range ep.Catalogs {
			if ep.Catalogs[i].Name == st.Name {
				c := &ep.Catalogs[i]
				c.Excluded, c.PackageFound, c.TotalBundles, c.MatchedBundles, c.Best = st.Excluded, st.PackageFound, st.TotalBundles, st.MatchedBundles, st.Best
			}
		}
	}
	if err != nil {
		ep.Resolution = report.ExtensionResolution{Status: report.ExtensionFailed, Message: err.Error()}
		p.violate(e.git, RuleExtensionResolutionFailed, policy.SeverityError,
			fmt.Sprintf("ClusterExtension %s cannot be resolved: %s", x.Name, err))
		return ep
	}
	ep.Resolution = report.ExtensionResolution{
		Status: report.ExtensionResolved, Bundle: d.Bundle, Version: d.Version, Image: d.Image, Catalog: d.Catalog,
		Channels: d.Channels, Deprecated: d.Deprecated, Change: d.Change, Edge: d.Edge,
	}
	return ep
}

// clusterCatalogContent is the content of a ClusterCatalog: the catalog given under its
// name, else its image.
func (s *Stage) clusterCatalogContent(ctx context.Context, tree *sources.Tree, cc *extension.ClusterCatalog, specs []CatalogSpec, loaded []*loadedCatalog) (*catalog.Catalog, error) {
	for i, spec := range specs {
		if spec.Name == cc.Name && spec.Namespace == "" {
			return loaded[i].content, loaded[i].err
		}
	}
	img := cc.Spec.Source.Image
	if img == nil || img.Ref == "" {
		return nil, fmt.Errorf("no spec.source.image.ref, and no --catalog %s=SRC", cc.Name)
	}
	l := s.load(ctx, tree, CatalogSpec{Name: cc.Name, Source: img.Ref, FromConfig: true})
	if l.err != nil {
		return nil, fmt.Errorf("image %s (give its content with --catalog %s=SRC): %w", img.Ref, cc.Name, l.err)
	}
	return l.content, nil
}

func refFile(r *gitRef) string {
	if r == nil {
		return ""
	}
	return r.file
}

func refLine(r *gitRef) int {
	if r == nil {
		return 0
	}
	return r.line
}

// assumeBaseExtensions makes the cluster run what the base revision's ClusterExtensions
// resolve to, where the cluster state does not say what OLM v1 installed: the head is
// then previewed as an upgrade (or a stay) from the base's bundle, under the extension's
// upgrade constraint policy, as OLM v1 will see it once the base is applied.
func assumeBaseExtensions(v *view, base []report.ClusterExtensionPreview) {
	for _, e := range v.extensions {
		if e.ext.Status.Install != nil && e.ext.Status.Install.Bundle.Name != "" {
			continue
		}
		for _, b := range base {
			if b.Name == e.ext.Name && b.Resolution.Status == report.ExtensionResolved {
				e.ext.Status.Install = &extension.InstallStatus{Bundle: extension.BundleMetadata{Name: b.Resolution.Bundle, Version: b.Resolution.Version}}
				e.fromBase = true
			}
		}
	}
}
