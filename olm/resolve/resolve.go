package resolve

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
)

// Resolver resolves namespaces against a fixed set of catalogs. Build one with New when the
// catalogs change and call Resolve for each namespace; it only reads its catalogs, so one
// Resolver may be used from many goroutines.
type Resolver struct {
	sources []*source
	opts    Options
}

// New indexes the catalogs for resolution. A catalog with Err set (or no Content) stays
// known: namespaces that see it fail to resolve, as in OLM.
func New(catalogs []Catalog, opts Options) *Resolver {
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	r := &Resolver{opts: opts}
	for _, c := range catalogs {
		r.sources = append(r.sources, newSource(c))
	}
	return r
}

// resolution is one namespace being resolved.
type resolution struct {
	r         *Resolver
	ns        Namespace
	visible   []*source
	installed []*entry
	deps      map[*entry]*entryDeps
	subs      []*subState
	warnings  []string

	p       *problem
	active  []bool
	varOf   map[*entry]varID
	entryOf []*entry // by varID; nil for Subscription variables
}

func (rs *resolution) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(rs.warnings, msg) {
		rs.warnings = append(rs.warnings, msg)
	}
}

// visibleSource returns the visible catalog with the key, or nil.
func (rs *resolution) visibleSource(key CatalogKey) *source {
	for _, s := range rs.visible {
		if s.key == key {
			return s
		}
	}
	return nil
}

// Resolve decides what OLM does in one namespace: for every Subscription the CSV it
// installs next (if any) and why not when it cannot, and the bundles, generated
// Subscriptions and dependencies that come with it. All Subscriptions of the namespace are
// resolved together, as OLM does, so that an upgrade never breaks an installed operator and
// never leaves an API without a provider — with one deliberate difference (docs/olm.md): a
// Subscription that cannot be resolved fails alone and the others go ahead, where OLM stops
// the whole namespace.
func (r *Resolver) Resolve(ns Namespace) *Result {
	rs := &resolution{r: r, ns: ns, deps: map[*entry]*entryDeps{}}
	res := &Result{Namespace: ns.Name}
	for _, s := range r.sources {
		if s.key.Namespace == ns.Name || (r.opts.GlobalNamespace != "" && s.key.Namespace == r.opts.GlobalNamespace && !ns.ExcludeGlobalCatalogs) {
			rs.visible = append(rs.visible, s)
		}
	}
	rs.visible = catalogOrder(rs.visible, nil, ns.Name)
	for i := range ns.Subscriptions {
		sub := &ns.Subscriptions[i]
		key := CatalogKey{Name: sub.Spec.CatalogSource, Namespace: sub.Spec.CatalogSourceNamespace}
		if key.Namespace == "" {
			key.Namespace = ns.Name
		}
		res.Subscriptions = append(res.Subscriptions, SubscriptionResult{
			Namespace: ns.Name, Name: sub.Name, Package: sub.Spec.Package, Channel: sub.Spec.Channel,
			Source: key, Approval: sub.InstallPlanApproval(),
		})
	}
	for i := range ns.Subscriptions {
		rs.subs = append(rs.subs, &subState{sub: &ns.Subscriptions[i], res: &res.Subscriptions[i]})
	}

	if err := rs.prepare(); err != nil {
		for _, st := range rs.subs {
			st.fail(ReasonErrorPreventedResolution, err.Error())
		}
		return res
	}
	rs.build()
	sol, ok := rs.solve()
	if ok {
		rs.report(res, sol)
	}
	res.Warnings = rs.warnings
	return res
}

// prepare reads the installed CSVs and finds every Subscription's candidates and their
// dependencies. An error here stops the whole namespace, as in OLM: a catalog that cannot be
// read, an installed CSV whose properties cannot be read or whose dependencies fail.
func (rs *resolution) prepare() error {
	for _, s := range rs.visible {
		if s.err != nil {
			return fmt.Errorf("error using catalogsource %s: %w", s.key, s.err)
		}
	}
	installed, err := installedEntries(rs.ns)
	if err != nil {
		return err
	}
	rs.installed = installed
	byName := map[string]*entry{}
	for _, e := range installed {
		byName[e.name] = e
	}
	for _, st := range rs.subs {
		if cur, ok := byName[st.sub.Status.InstalledCSV]; ok && st.sub.Status.InstalledCSV != "" {
			st.current = cur
			st.res.Installed = cur.name
		}
	}
	if err := rs.closureError(installed); err != nil {
		return err
	}
	for _, st := range rs.subs {
		rs.findCandidates(st)
		if st.failed {
			continue
		}
		// OLM builds every candidate's dependencies before it solves; one that cannot be
		// built fails resolution. olmsync fails only the Subscription it belongs to.
		if err := rs.closureError(st.cands); err != nil {
			st.fail(ReasonErrorPreventedResolution, err.Error())
		}
	}
	return nil
}

// closureError walks the dependencies of the entries, and of their candidate providers,
// transitively, and returns the first that cannot be built.
func (rs *resolution) closureError(from []*entry) error {
	seen := map[*entry]bool{}
	queue := slices.Clone(from)
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if seen[e] {
			continue
		}
		seen[e] = true
		d := rs.depsOf(e)
		if d.err != nil {
			return d.err
		}
		for _, cands := range d.cands {
			queue = append(queue, cands...)
		}
	}
	return nil
}

func (rs *resolution) entryVar(e *entry) varID {
	if v, ok := rs.varOf[e]; ok {
		return v
	}
	v := rs.p.addVar(e.id)
	rs.varOf[e] = v
	rs.entryOf = append(rs.entryOf, e)
	return v
}

func (rs *resolution) addVar(name string) varID {
	rs.entryOf = append(rs.entryOf, nil)
	return rs.p.addVar(name)
}

// activate makes a clause count in the searches from now on.
func (rs *resolution) activate(c clauseID) {
	for len(rs.active) <= int(c) {
		rs.active = append(rs.active, false)
	}
	rs.active[c] = true
}

// build writes the namespace as OLM's constraint model: each Subscription exists and
// requires one of its candidates or its installed CSV; installed CSVs no Subscription
// references must stay; each bundle taken requires a provider for each dependency; a
// candidate conflicts with the CSV it would replace; at most one bundle per package and at
// most one provider per API.
func (rs *resolution) build() {
	rs.p = &problem{}
	rs.varOf = map[*entry]varID{}
	referenced := map[string]bool{}
	for _, st := range rs.subs {
		if st.sub.Status.InstalledCSV != "" {
			referenced[st.sub.Status.InstalledCSV] = true
		}
	}
	for _, st := range rs.subs {
		if st.failed {
			continue
		}
		st.built = true
		st.v = rs.addVar("subscription:" + st.sub.Name)
		st.exists = rs.p.mandatory(st.v, fmt.Sprintf("subscription %s exists", st.sub.Name))
		var cands []varID
		var ids []string
		for _, c := range st.cands {
			cands = append(cands, rs.entryVar(c))
			ids = append(ids, c.id)
		}
		if st.current != nil {
			cands = append(cands, rs.entryVar(st.current))
			ids = append(ids, st.current.id)
		}
		text := fmt.Sprintf("no operators found matching the criteria of subscription %s", st.sub.Name)
		switch len(ids) {
		case 0:
		case 1:
			text = fmt.Sprintf("subscription %s requires %s", st.sub.Name, ids[0])
		default:
			text = fmt.Sprintf("subscription %s requires at least one of %s or %s", st.sub.Name, strings.Join(ids[:len(ids)-1], ", "), ids[len(ids)-1])
		}
		st.requires = rs.p.depend(st.v, cands, text)
	}
	for _, e := range rs.installed {
		v := rs.entryVar(e)
		if !referenced[e.name] {
			rs.p.mandatory(v, fmt.Sprintf("clusterserviceversion %s exists and is not referenced by a subscription", e.name))
		}
	}
	// Dependencies, breadth first over every variable, new ones included.
	for v := 0; v < len(rs.entryOf); v++ {
		e := rs.entryOf[v]
		if e == nil {
			continue
		}
		if e.deprecated {
			rs.p.prohibit(varID(v), fmt.Sprintf("bundle %s is deprecated", e.id))
		}
		d := rs.depsOf(e)
		if d.err != nil {
			continue // only reachable from a Subscription already failed for it
		}
		for i, pred := range d.preds {
			var cands []varID
			for _, c := range d.cands[i] {
				cands = append(cands, rs.entryVar(c))
			}
			rs.p.depend(varID(v), cands, fmt.Sprintf("bundle %s requires an operator %s", e.name, pred))
		}
	}
	for _, st := range rs.subs {
		if st.failed || st.current == nil {
			continue
		}
		cur := rs.varOf[st.current]
		for _, c := range st.cands {
			st.conflict = append(st.conflict, rs.p.conflict(rs.varOf[c], cur, fmt.Sprintf("%s conflicts with %s", c.id, st.current.id)))
		}
	}
	rs.addInvariants()
	rs.active = make([]bool, len(rs.p.clauses))
	for i := range rs.active {
		rs.active[i] = true
	}
	// A Subscription that failed before the search keeps its installed CSV, and no
	// dependency may install its package behind its back.
	for _, st := range rs.subs {
		if st.failed {
			rs.holdFailed(st)
		}
	}
}

// addInvariants: at most one bundle per package, at most one provider per API, in OLM's
// wording, packages and APIs in name order.
func (rs *resolution) addInvariants() {
	byPkg := map[string][]varID{}
	byGVK := map[catalog.GVK][]varID{}
	for v, e := range rs.entryOf {
		if e == nil {
			continue
		}
		if e.pkg != "" {
			byPkg[e.pkg] = append(byPkg[e.pkg], varID(v))
		}
		for _, g := range e.provides {
			if !slices.Contains(byGVK[g], varID(v)) {
				byGVK[g] = append(byGVK[g], varID(v))
			}
		}
	}
	for _, pkg := range sortedKeys(byPkg, cmp.Compare[string]) {
		if vars := byPkg[pkg]; len(vars) > 1 {
			rs.p.atMostOne(vars, fmt.Sprintf("%s originate from package %s", rs.joinVars(vars), pkg))
		}
	}
	for _, g := range sortedKeys(byGVK, func(a, b catalog.GVK) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Kind, b.Kind))
	}) {
		if vars := byGVK[g]; len(vars) > 1 {
			rs.p.atMostOne(vars, fmt.Sprintf("%s provide %s (%s/%s)", rs.joinVars(vars), g.Kind, g.Group, g.Version))
		}
	}
}

func sortedKeys[K comparable, V any](m map[K]V, compare func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	return keys
}

// joinVars writes the identifiers of an invariant's providers as OLM does: in byte order
// (OLM sorts them before it builds the message, resolver.go addInvariants), "a, b and c".
func (rs *resolution) joinVars(vars []varID) string {
	names := make([]string, len(vars))
	for i, v := range vars {
		names[i] = rs.p.vars[v].name
	}
	slices.Sort(names)
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// holdFailed takes a failed Subscription out of the search: its own clauses no longer
// count, its installed CSV stays, and, unless another Subscription of the namespace is to
// the same package, no bundle of its package may come in as a dependency (that would
// generate a second Subscription to the package beside the failed one).
func (rs *resolution) holdFailed(st *subState) {
	if st.built {
		for _, c := range append([]clauseID{st.exists, st.requires}, st.conflict...) {
			rs.active[c] = false
		}
	}
	if st.current != nil {
		if v, ok := rs.varOf[st.current]; ok {
			rs.activate(rs.p.mandatory(v, fmt.Sprintf("clusterserviceversion %s stays: subscription %s is not resolved", st.current.name, st.sub.Name)))
		}
	}
	pkg := st.sub.Spec.Package
	if slices.ContainsFunc(rs.subs, func(o *subState) bool { return !o.failed && o.sub.Spec.Package == pkg }) {
		return // another Subscription installs the package in its own right
	}
	for v, e := range rs.entryOf {
		if e != nil && !e.installed() && e.pkg == pkg {
			rs.activate(rs.p.prohibit(varID(v), fmt.Sprintf("bundle %s is prohibited: subscription %s to package %s is not resolved", e.id, st.sub.Name, pkg)))
		}
	}
}

// solve searches; when there is no solution it fails the Subscriptions the explanation
// names (all of them when it names none), takes them out, and searches again.
func (rs *resolution) solve() (solution, bool) {
	maxSteps := rs.r.opts.MaxSteps
	for {
		var open []*subState
		for _, st := range rs.subs {
			if !st.failed {
				open = append(open, st)
			}
		}
		sol, ok, _, err := rs.p.solve(rs.active, maxSteps)
		if err != nil {
			for _, st := range open {
				st.fail(ReasonErrorPreventedResolution, fmt.Sprintf("resolution of namespace %s stopped after %d steps: %v", rs.ns.Name, maxSteps, err))
			}
			return solution{}, false
		}
		if ok {
			return sol, true
		}
		core := rs.p.explain(rs.active, maxSteps)
		msg := rs.p.notSatisfiable(core)
		var culprits []*subState
		for _, st := range open {
			if slices.Contains(core, st.exists) {
				culprits = append(culprits, st)
			}
		}
		if len(culprits) == 0 {
			// Nothing a Subscription asks for is at fault: what is installed cannot stand as
			// it is. Nothing can be resolved.
			for _, st := range open {
				st.fail(ReasonConstraintsNotSatisfiable, msg)
			}
			return solution{}, false
		}
		for _, st := range culprits {
			st.fail(ReasonConstraintsNotSatisfiable, msg)
			rs.holdFailed(st)
		}
	}
}

// report writes the decision for every Subscription that resolved, the bundles to install
// and the Subscriptions to generate.
func (rs *resolution) report(res *Result, sol solution) {
	owner := map[varID]*subState{}
	for _, st := range rs.subs {
		if st.failed {
			continue
		}
		v, _ := rs.p.chosen(sol, st.requires)
		owner[v] = st
		rs.reportSubscription(st, sol, v)
	}
	for v, e := range rs.entryOf {
		if e == nil || e.installed() || !sol.taken[v] {
			continue
		}
		b := Bundle{Name: e.name, Package: e.pkg, Channel: e.channel.ch.Name, Source: e.source().key, Replaces: e.edge.Replaces, Content: e.bundle}
		if e.version != nil {
			b.Version = e.version.String()
		}
		if st, ok := owner[varID(v)]; ok {
			b.Subscription = st.sub.Name
			if st.current != nil {
				b.Replaces = st.current.name
			}
		} else {
			res.Generated = append(res.Generated, generatedSubscription(rs.ns.Name, e))
		}
		res.Bundles = append(res.Bundles, b)
	}
}

func (rs *resolution) reportSubscription(st *subState, sol solution, chosen varID) {
	r := &st.res.Resolution
	e := rs.entryOf[chosen]
	st.res.Dependencies = rs.dependencyTree(sol, chosen)
	st.res.Deprecations = rs.deprecations(st)
	if e != st.current {
		r.Status, r.Next = StatusResolved, e.name
		key := e.source().key
		r.NextSource = &key
		r.Path = append([]string{e.name}, rs.path(st, e)...)
		if st.current != nil {
			r.Replaces = st.current.name
			r.Message = fmt.Sprintf("%s replaces %s", e.name, st.current.name)
		} else {
			r.Message = fmt.Sprintf("%s is installed", e.name)
		}
		return
	}
	if e.name == r.Head {
		r.Status = StatusUpToDate
		r.Message = fmt.Sprintf("%s is the head of channel %s", e.name, st.res.Channel)
		return
	}
	r.Status = StatusFailed
	if len(st.cands) == 0 {
		r.Reason = ReasonNoUpgradePath
		r.Message = fmt.Sprintf("nothing in channel %s of package %s replaces the installed %s (by replaces, skips or skipRange)", st.res.Channel, st.sub.Spec.Package, e.name)
		if r.Head != "" {
			r.Message += "; the channel head is " + r.Head
		}
		return
	}
	r.Reason = ReasonUpgradeHeld
	r.Path = rs.path(st, e)
	r.Message = fmt.Sprintf("the upgrade from %s is held back: %s", e.name, rs.explainHold(st))
}

// explainHold says why no candidate could replace the installed CSV: it asks the search to
// move the Subscription off it, and explains the failure.
func (rs *resolution) explainHold(st *subState) string {
	c := rs.p.prohibit(rs.varOf[st.current], fmt.Sprintf("subscription %s upgrades from %s", st.sub.Name, st.current.name))
	rs.activate(c)
	defer func() { rs.active[c] = false }()
	core := rs.p.explain(rs.active, rs.r.opts.MaxSteps)
	if core == nil {
		return "an upgrade is possible only if other Subscriptions of the namespace took different bundles; resolution takes them in order and keeps the installed CSV"
	}
	return rs.p.notSatisfiable(core)
}

// dependencyTree lists, breadth first, the bundles that satisfy the dependencies of the
// chosen entry and of those bundles in turn.
func (rs *resolution) dependencyTree(sol solution, root varID) []Dependency {
	var out []Dependency
	seen := map[varID]bool{root: true}
	queue := []varID{root}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		e := rs.entryOf[v]
		d := rs.depsOf(e)
		if d.err != nil {
			continue
		}
		for _, c := range rs.p.vars[v].deps {
			w, ok := rs.p.chosen(sol, c)
			if !ok {
				continue
			}
			dep := rs.entryOf[w]
			item := Dependency{RequiredBy: e.name, Requirement: requirementOf(rs.p.clauses[c].text, e.name), Name: dep.name, Package: dep.pkg, Installed: dep.installed()}
			if !dep.installed() {
				key := dep.source().key
				item.Source, item.Channel = &key, dep.channel.ch.Name
			}
			out = append(out, item)
			if !seen[w] {
				seen[w] = true
				queue = append(queue, w)
			}
		}
	}
	return out
}

// requirementOf is the predicate part of "bundle <csv> requires an operator <predicate>".
func requirementOf(text, csv string) string {
	return strings.TrimPrefix(text, "bundle "+csv+" requires an operator ")
}

// deprecations are the catalog's olm.deprecations entries about the installed CSV, which
// OLM evaluates only when the installed CSV is in the subscribed channel of the
// Subscription's catalog.
func (rs *resolution) deprecations(st *subState) []Deprecation {
	if st.current == nil || st.channel == nil || st.channel.byName[st.current.name] == nil {
		return nil
	}
	pkg := st.pkg.pkg
	var out []Deprecation
	if msg, ok := pkg.Deprecated("olm.package", ""); ok {
		out = append(out, Deprecation{Condition: v1alpha1.SubscriptionPackageDeprecated, Message: fmt.Sprintf("olm.package/%s: %s", pkg.Name, msg)})
	}
	if st.sub.Spec.Channel != "" {
		if msg, ok := pkg.Deprecated("olm.channel", st.channel.ch.Name); ok {
			out = append(out, Deprecation{Condition: v1alpha1.SubscriptionChannelDeprecated, Message: fmt.Sprintf("olm.channel/%s: %s", st.channel.ch.Name, msg)})
		}
	}
	if msg, ok := pkg.Deprecated("olm.bundle", st.current.name); ok {
		out = append(out, Deprecation{Condition: v1alpha1.SubscriptionBundleDeprecated, Message: fmt.Sprintf("olm.bundle/%s: %s", st.current.name, msg)})
	}
	return out
}

// GeneratedSubscriptionName is the name OLM gives the Subscription it creates for a
// dependency: <package>-<channel>-<catalog>-<catalogNamespace>.
func GeneratedSubscriptionName(pkg, channel string, source CatalogKey) string {
	return strings.Join([]string{pkg, channel, source.Name, source.Namespace}, "-")
}

func generatedSubscription(namespace string, e *entry) v1alpha1.Subscription {
	src := e.source().key
	sub := v1alpha1.Subscription{
		Spec: v1alpha1.SubscriptionSpec{
			CatalogSource: src.Name, CatalogSourceNamespace: src.Namespace,
			Package: e.pkg, Channel: e.channel.ch.Name, StartingCSV: e.name,
			InstallPlanApproval: v1alpha1.ApprovalAutomatic,
		},
	}
	sub.APIVersion, sub.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.SubscriptionKind
	sub.Namespace, sub.Name = namespace, GeneratedSubscriptionName(e.pkg, e.channel.ch.Name, src)
	return sub
}
