package resolve

import (
	"fmt"
	"slices"

	"github.com/blang/semver/v4"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// installedCSV is what a candidate must replace: a CSV's name and version (nil when unknown).
type installedCSV struct {
	name    string
	version *semver.Version
}

// canReplace is OLM's test for an upgrade candidate: the entry replaces the installed CSV,
// skips it, or has a skipRange containing its version.
func canReplace(e *entry, cur installedCSV) bool {
	return e.edge.CanReplace(cur.name, cur.version)
}

// subState is one Subscription while its namespace is resolved.
type subState struct {
	sub *v1alpha1.Subscription
	res *SubscriptionResult

	named   *source
	pkg     *pkgIndex
	channel *channelIndex // the channel followed, in the named catalog
	// channels are the channels candidates come from in the named catalog: spec.channel, or
	// every channel of the package with the default channel first.
	channels []*channelIndex
	current  *entry
	// cands are the candidates in OLM's order of preference, current not included.
	cands []*entry

	failed bool

	// The Subscription's variable and clauses, once built.
	built    bool
	v        varID
	exists   clauseID
	requires clauseID
	conflict []clauseID
}

func (st *subState) fail(reason, message string) {
	st.failed = true
	st.res.Resolution = Resolution{Status: StatusFailed, Reason: reason, Message: message, Head: st.res.Resolution.Head}
}

// noCandidates fails the Subscription as OLM does when one of its four filters finds
// nothing: the solver's explanation is the filter's text and the Subscription's
// existence, in byte order as OLM sorts the clauses ("no …" before "subscription …").
func (st *subState) noCandidates(format string, args ...any) {
	st.fail(ReasonConstraintsNotSatisfiable, fmt.Sprintf("constraints not satisfiable: %s, subscription %s exists", fmt.Sprintf(format, args...), st.sub.Name))
}

// findCandidates applies OLM's filters to the named catalog, orders what passes, and, for
// an upgrade, adds the other visible catalogs' candidates by seed 004's order of precedence.
func (rs *resolution) findCandidates(st *subState) {
	spec := st.sub.Spec
	st.named = rs.visibleSource(st.res.Source)
	if st.named == nil || st.named.entries == 0 {
		st.noCandidates("no operators found from catalog %s in namespace %s referenced by subscription %s", spec.CatalogSource, spec.CatalogSourceNamespace, st.sub.Name)
		return
	}
	st.pkg = st.named.packages[spec.Package]
	if st.pkg == nil || !slices.ContainsFunc(st.pkg.channels, func(c *channelIndex) bool { return len(c.entries) > 0 }) {
		st.noCandidates("no operators found in package %s in the catalog referenced by subscription %s", spec.Package, st.sub.Name)
		return
	}
	if spec.Channel == "" {
		st.channel = st.pkg.defaultChannel()
		st.channels = packageChannels(st.pkg)
	} else if ch := st.pkg.channel(spec.Channel); ch != nil && len(ch.entries) > 0 {
		st.channel = ch
		st.channels = []*channelIndex{ch}
	}
	if st.channel != nil {
		st.res.Channel = st.channel.ch.Name
		if h := st.channel.head(); h != nil {
			st.res.Resolution.Head = h.name
		}
	}
	if len(st.channels) == 0 {
		st.noCandidates("no operators found in channel %s of package %s in the catalog referenced by subscription %s", spec.Channel, spec.Package, st.sub.Name)
		return
	}

	if st.current == nil && spec.StartingCSV != "" {
		// startingCSV is matched before channels are ordered, so it may name an entry that
		// another entry skips.
		for _, ch := range st.channels {
			if e, ok := ch.byName[spec.StartingCSV]; ok {
				st.cands = append(st.cands, e)
			}
		}
		if len(st.cands) == 0 {
			st.noCandidates("no operators found with name %s in channel %s of package %s in the catalog referenced by subscription %s", spec.StartingCSV, spec.Channel, spec.Package, st.sub.Name)
		}
		return
	}
	for _, ch := range st.channels {
		if ch.orderErr != nil {
			st.fail(ReasonErrorPreventedResolution, ch.orderErr.Error())
			return
		}
	}
	if st.current == nil {
		for _, ch := range st.channels {
			st.cands = append(st.cands, ch.order...)
		}
		return
	}
	st.cands = rs.upgradeCandidates(st, installedCSV{name: st.current.name, version: st.current.version})
}

// upgradeCandidates are the entries that can replace cur, in order of preference: in the
// named catalog, every channel's entries head first (OLM's own candidates; the head, when it
// can replace cur, is seed 004's level 1, the others level 2); then the heads of the same
// channel in the other visible catalogs (level 3), then their other entries (level 4).
// Other catalogs come in the order OLM prefers catalogs for dependencies (priority, then
// the namespace's own before the global ones, then name); a channel of theirs that cannot
// be ordered is passed over with a warning.
func (rs *resolution) upgradeCandidates(st *subState, cur installedCSV) []*entry {
	var out []*entry
	for _, ch := range st.channels {
		for _, e := range ch.order {
			if canReplace(e, cur) {
				out = append(out, e)
			}
		}
	}
	var others []*channelIndex
	for _, src := range catalogOrder(rs.visible, nil, rs.ns.Name) {
		if src == st.named {
			continue
		}
		pkg := src.packages[st.sub.Spec.Package]
		if pkg == nil {
			continue
		}
		var chans []*channelIndex
		if st.sub.Spec.Channel == "" {
			chans = packageChannels(pkg)
		} else if ch := pkg.channel(st.sub.Spec.Channel); ch != nil {
			chans = []*channelIndex{ch}
		}
		for _, ch := range chans {
			if ch.orderErr != nil {
				rs.warn("subscription %s: channel %s of package %s in catalog %s offers no upgrade: %v", st.sub.Name, ch.ch.Name, pkg.pkg.Name, src.key, ch.orderErr)
				continue
			}
			others = append(others, ch)
		}
	}
	for _, ch := range others {
		if h := ch.head(); h != nil && canReplace(h, cur) {
			out = append(out, h)
		}
	}
	for _, ch := range others {
		if len(ch.order) < 2 {
			continue
		}
		for _, e := range ch.order[1:] {
			if canReplace(e, cur) {
				out = append(out, e)
			}
		}
	}
	return out
}

// packageChannels are the package's channels that have entries, the default channel first
// and the others by name, as OLM orders a Subscription's candidates when it names no
// channel.
func packageChannels(p *pkgIndex) []*channelIndex {
	var out []*channelIndex
	if d := p.defaultChannel(); d != nil && len(d.entries) > 0 {
		out = append(out, d)
	}
	for _, ch := range p.channels {
		if len(ch.entries) > 0 && !slices.Contains(out, ch) {
			out = append(out, ch)
		}
	}
	return out
}

// path is every CSV OLM installs after from, one upgrade at a time, following the first
// candidate of each step (what resolution takes when nothing stands in the way), until the
// subscribed channel's head or until nothing replaces the last one.
func (rs *resolution) path(st *subState, from *entry) []string {
	var out []string
	seen := map[string]bool{from.name: true}
	cur := installedCSV{name: from.name, version: from.version}
	head := st.res.Resolution.Head
	for cur.name != head {
		next := rs.upgradeCandidates(st, cur)
		if len(next) == 0 || seen[next[0].name] {
			break
		}
		out = append(out, next[0].name)
		seen[next[0].name] = true
		cur = installedCSV{name: next[0].name, version: next[0].version}
	}
	return out
}
