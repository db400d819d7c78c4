package preview

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/plans"
	"github.com/olmsync/olmsync/olm/resolve"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

// clusterPreview is the preview of one cluster.
type clusterPreview struct {
	name       string
	subs       []report.SubscriptionPreview
	groups     []report.OperatorGroupPreview
	exts       []report.ClusterExtensionPreview
	violations []policy.Violation
	problems   []report.Problem
	warnings   []report.Warning
	// groupRefs are the OperatorGroups of Git by namespace (the first of each).
	groupRefs map[string]*gitRef
	// runs are what each Subscription (namespace/name) ends on once the revision is
	// applied, for a later revision that takes this one as its base.
	runs map[string]*run
	// unpack pulls a bundle image that a catalog lists without its content.
	unpack func(image string) (*catalog.UnpackedBundle, error)
}

// run is the CSV a Subscription ends on, and the dependencies that came with it.
type run struct {
	channel string
	csv     *v1alpha1.ClusterServiceVersion
	deps    []*v1alpha1.ClusterServiceVersion
}

// previewCluster builds the cluster's view, resolves every namespace that has a
// Subscription, judges every CSV the namespaces would run against the OperatorGroups, and
// reports it.
func (s *Stage) previewCluster(ctx context.Context, tree *sources.Tree, in *policy.Input, specs []CatalogSpec, loaded []*loadedCatalog) *clusterPreview {
	var state *ClusterState
	if !in.Library {
		state = s.stateFor(in.Cluster)
	}
	v := newView(in, state)
	marketplace := cmp.Or(in.Config.MarketplaceNamespace, render.DefaultMarketplaceNamespace)
	cats := make([]resolve.Catalog, 0, len(specs))
	contents := map[resolve.CatalogKey]*catalog.Catalog{}
	for i, spec := range specs {
		ns := cmp.Or(spec.Namespace, marketplace)
		cats = append(cats, resolve.Catalog{
			Name: spec.Name, Namespace: ns, Priority: v.catalogPriority(spec.Name, ns),
			Content: loaded[i].content, Err: loaded[i].err,
		})
		contents[resolve.CatalogKey{Name: spec.Name, Namespace: ns}] = loaded[i].content
	}
	if s.opts.Base != nil && !in.Library {
		assumeBase(v, s.opts.Base.runsOf(in.Cluster))
	}
	v.warnUnknownCatalogs(contents, marketplace)
	resolver := s.resolver(cats, marketplace)
	results := resolveNamespaces(resolver, v)
	p := &clusterPreview{name: in.Cluster, warnings: v.warnings, runs: map[string]*run{},
		unpack: func(image string) (*catalog.UnpackedBundle, error) { return s.unpackBundle(ctx, image) }}
	outcomes, settled := judge(v, results, approvedBundles(v, results))
	ends := settle(resolver, v, results)
	p.report(v, results, contents, outcomes, ends)
	p.reportGroups(v, settled)
	p.recordRuns(v, results, contents, ends)
	if s.opts.Base != nil && !in.Library {
		p.describeChanges(s.opts.Base.runsOf(in.Cluster))
	}
	s.previewExtensions(ctx, tree, v, p, specs, loaded)
	return p
}

// resolveNamespaces resolves every namespace that has a Subscription, in parallel: the
// Resolver only reads its catalogs.
func resolveNamespaces(r *resolve.Resolver, v *view) map[string]*resolve.Result {
	byNS := map[string]*resolve.Namespace{}
	for _, e := range v.subscriptions {
		ns := byNS[e.sub.Namespace]
		if ns == nil {
			ns = &resolve.Namespace{Name: e.sub.Namespace, ExcludeGlobalCatalogs: excludesGlobalCatalogs(v, e.sub.Namespace), FailForward: failsForward(v, e.sub.Namespace)}
			for _, c := range v.csvs {
				if c.Namespace == e.sub.Namespace {
					ns.CSVs = append(ns.CSVs, c)
				}
			}
			byNS[e.sub.Namespace] = ns
		}
		ns.Subscriptions = append(ns.Subscriptions, *plans.ForResolver(&e.sub))
	}
	names := slices.Sorted(maps.Keys(byNS))
	results := make([]*resolve.Result, len(names))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(names)) {
		wg.Go(func() {
			for i := range work {
				results[i] = r.Resolve(*byNS[names[i]])
			}
		})
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	out := make(map[string]*resolve.Result, len(names))
	for i, n := range names {
		out[n] = results[i]
		if f := plans.OperatorGroupsFailure(len(v.groupsOf(n))); f != nil {
			failAll(results[i], *f)
		}
	}
	return out
}

// failAll gives every Subscription of a namespace the same failed resolution, and the
// namespace nothing to install: what the Subscription controller does when the namespace
// does not hold exactly one OperatorGroup (plans.OperatorGroupsFailure). The resolver still
// ran, for each Subscription's package and channel.
func failAll(res *resolve.Result, f resolve.Resolution) {
	for i := range res.Subscriptions {
		res.Subscriptions[i].Resolution = f
		res.Subscriptions[i].Dependencies = nil
	}
	res.Bundles, res.Generated = nil, nil
}

// excludesGlobalCatalogs reports whether the namespace's one OperatorGroup hides the
// global catalogs from resolution.
func excludesGlobalCatalogs(v *view, ns string) bool {
	gs := v.groupsOf(ns)
	return len(gs) == 1 && gs[0].og.Annotations[resolve.ExcludeGlobalCatalogsAnnotation] == "true"
}

// failsForward reports whether the namespace's OperatorGroups let OLM fail forward
// (resolve.FailForwardEnabled, as the Subscription controller asks it).
func failsForward(v *view, ns string) bool {
	gs := v.groupsOf(ns)
	ogs := make([]*operatorsv1.OperatorGroup, 0, len(gs))
	for _, g := range gs {
		ogs = append(ogs, &g.og)
	}
	return resolve.FailForwardEnabled(ogs...)
}

// assumeBase makes the cluster run what the base revision installs, where the cluster
// state does not already say what a Subscription has installed: the base's CSVs (and
// their dependencies) are in their namespaces, Succeeded, and its Subscriptions name them
// as installed. A CSV stays when the change removes its Subscription, as on a cluster.
func assumeBase(v *view, runs map[string]*run) {
	has := func(c *v1alpha1.ClusterServiceVersion) bool {
		return slices.ContainsFunc(v.csvs, func(x v1alpha1.ClusterServiceVersion) bool {
			return x.Namespace == c.Namespace && x.Name == c.Name
		})
	}
	for _, key := range slices.Sorted(maps.Keys(runs)) {
		r := runs[key]
		for _, c := range append([]*v1alpha1.ClusterServiceVersion{r.csv}, r.deps...) {
			if !has(c) {
				v.csvs = append(v.csvs, *c.DeepCopy())
			}
		}
	}
	for _, e := range v.subscriptions {
		if r, ok := runs[e.sub.Namespace+"/"+e.sub.Name]; ok && e.sub.Status.InstalledCSV == "" {
			e.sub.Status.InstalledCSV = r.csv.Name
		}
	}
}

// recordRuns notes what each Subscription of the view ends on once the revision is
// applied: where the controllers stop (settle's end) when they install something, else the
// end of its path (a plan that waits for a person is taken as approved), or what it has
// installed.
func (p *clusterPreview) recordRuns(v *view, results map[string]*resolve.Result, contents map[resolve.CatalogKey]*catalog.Catalog, ends map[string]*report.PreviewEnd) {
	for ns, res := range results {
		var deps []*v1alpha1.ClusterServiceVersion
		for _, b := range res.Bundles {
			if b.Subscription == "" && b.Content != nil {
				deps = append(deps, csvFromBundle(b.Content, ns))
			}
		}
		for _, sr := range res.Subscriptions {
			var csv *v1alpha1.ClusterServiceVersion
			switch r := sr.Resolution; {
			case r.Status == resolve.StatusResolved:
				last := cmp.Or(lastOf(r.Path), r.Next)
				if e := ends[ns+"/"+sr.Name]; e != nil && e.InstalledCSV != "" {
					last = e.InstalledCSV
				}
				if b := findBundle(contents, sr.Package, last, sr.Source, r.NextSource); b != nil {
					csv = csvFromBundle(b, ns)
				}
			case sr.Installed != "":
				csv = installedCSV(v, ns, sr.Installed)
			}
			if csv == nil {
				continue
			}
			csv.Status.Phase, csv.Status.Reason = v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful
			p.runs[ns+"/"+sr.Name] = &run{channel: sr.Channel, csv: csv, deps: deps}
		}
	}
}

func installedCSV(v *view, ns, name string) *v1alpha1.ClusterServiceVersion {
	for i := range v.csvs {
		if v.csvs[i].Namespace == ns && v.csvs[i].Name == name {
			return v.csvs[i].DeepCopy()
		}
	}
	return nil
}

// findBundle looks a bundle of a package up in the catalogs named, in order.
func findBundle(contents map[resolve.CatalogKey]*catalog.Catalog, pkg, name string, keys ...any) *catalog.Bundle {
	for _, k := range keys {
		var key resolve.CatalogKey
		switch k := k.(type) {
		case resolve.CatalogKey:
			key = k
		case *resolve.CatalogKey:
			if k == nil {
				continue
			}
			key = *k
		}
		c := contents[key]
		if c == nil {
			continue
		}
		if p := c.Package(pkg); p != nil {
			if b := p.Bundle(name); b != nil {
				return b
			}
		}
	}
	return nil
}

// csvFromBundle is the CSV a bundle installs into a namespace, as the InstallPlan writes
// it: the bundle's CSV when the catalog carries it, else one made of its olm.csv.metadata
// (install modes, owned and required APIs, minKubeVersion — all the OperatorGroup checks
// read), with the bundle's properties in OLM's annotation so that resolution reads it as
// an installed operator.
func csvFromBundle(b *catalog.Bundle, ns string) *v1alpha1.ClusterServiceVersion {
	var csv *v1alpha1.ClusterServiceVersion
	if b.CSV != nil {
		csv = b.CSV.DeepCopy()
	} else {
		csv = &v1alpha1.ClusterServiceVersion{}
		if bp, err := b.Props(); err == nil && bp.Metadata != nil {
			m := bp.Metadata
			csv.Annotations = maps.Clone(m.Annotations)
			csv.Spec.InstallModes = slices.Clone(m.InstallModes)
			csv.Spec.CustomResourceDefinitions = *m.CustomResourceDefinitions.DeepCopy()
			csv.Spec.APIServiceDefinitions = *m.APIServiceDefinitions.DeepCopy()
			csv.Spec.MinKubeVersion = m.MinKubeVersion
		}
		if b.Version.String() != "0.0.0" {
			csv.Spec.Version = v1alpha1.OperatorVersion(b.Version.String())
		}
	}
	csv.APIVersion, csv.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.ClusterServiceVersionKind
	csv.Name, csv.Namespace = b.Name, ns
	csv.Status = v1alpha1.ClusterServiceVersionStatus{}
	if anno, err := resolve.PropertiesAnnotationValue(b.Properties); err == nil {
		if csv.Annotations == nil {
			csv.Annotations = map[string]string{}
		}
		csv.Annotations[resolve.PropertiesAnnotation] = anno
	}
	return csv
}

func lastOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// warnUnknownCatalogs says which fact the preview lacks for every CatalogSource of the
// cluster a namespace with Subscriptions sees but whose content it was not given: it
// resolves as if that catalog served nothing, where OLM reads it for every such namespace
// (a bundle it serves can change what is installed) and, while it cannot be read, fails
// every Subscription of those namespaces (olm-behaviour 5.5, "error using catalogsource").
func (v *view) warnUnknownCatalogs(contents map[resolve.CatalogKey]*catalog.Catalog, marketplace string) {
	subscribed := map[string]bool{}
	for _, e := range v.subscriptions {
		subscribed[e.sub.Namespace] = true
	}
	for _, c := range v.catalogSources {
		key := resolve.CatalogKey{Name: c.Name, Namespace: c.Namespace}
		if _, given := contents[key]; given {
			continue
		}
		var seen []string
		for _, ns := range slices.Sorted(maps.Keys(subscribed)) {
			if ns == c.Namespace || c.Namespace == marketplace && !excludesGlobalCatalogs(v, ns) {
				seen = append(seen, ns)
			}
		}
		if len(seen) == 0 {
			continue
		}
		w := report.Warning{Message: fmt.Sprintf("olm preview: CatalogSource %s/%s is seen by the Subscriptions of %s, but its content was not given (--catalog %s/%s=SRC, or catalogs in olmsync.yaml): "+
			"the preview resolves as if it served nothing, where OLM reads it (a bundle it serves can change what is installed) and, while it cannot be read, fails every Subscription of those namespaces",
			c.Namespace, c.Name, strings.Join(seen, ", "), c.Name, c.Namespace)}
		if ref := v.catalogRefs[key]; ref != nil {
			w.File, w.Line, w.Apps = ref.file, ref.line, []string{ref.app}
		}
		v.warnings = append(v.warnings, w)
	}
}
