package resolve

import (
	"slices"
)

// entryDeps are an entry's dependencies and, for each, its candidate providers in OLM's
// order of preference.
type entryDeps struct {
	preds []predicate
	cands [][]*entry
	err   error
}

// depsOf computes (once per resolution) the entry's dependencies and their candidates.
func (rs *resolution) depsOf(e *entry) *entryDeps {
	if d, ok := rs.deps[e]; ok {
		return d
	}
	d := &entryDeps{}
	rs.deps[e] = d
	d.preds, d.err = dependencies(e)
	if d.err != nil {
		return d
	}
	for _, pred := range d.preds {
		cands, err := rs.providers(e, pred)
		if err != nil {
			d.err = err
			return d
		}
		d.cands = append(d.cands, cands)
	}
	return d
}

// providers are the entries that satisfy a dependency of e, in OLM's order of preference:
// installed CSVs first; then, catalog by catalog (e's own catalog first, then by priority,
// then the namespace's catalogs before the global ones, then by name), the channels that hold
// at least one satisfying bundle — default channels first, then by package and channel name
// — each head first without its skipped entries, keeping the satisfying ones. So the newest
// satisfying entry of the preferred channel comes first. A channel that must be ordered but
// cannot be is OLM's error.
func (rs *resolution) providers(e *entry, pred predicate) ([]*entry, error) {
	var out []*entry
	for _, ie := range rs.installed {
		if pred.test(ie) {
			out = append(out, ie)
		}
	}
	for _, src := range catalogOrder(rs.visible, e.source(), rs.ns.Name) {
		chans := holding(src, pred)
		sortChannels(chans)
		for _, ch := range chans {
			if ch.orderErr != nil {
				return nil, ch.orderErr
			}
			for _, ce := range ch.order {
				if pred.test(ce) {
					out = append(out, ce)
				}
			}
		}
	}
	return out, nil
}

// holding are the source's channels with at least one entry (skipped ones included) that
// satisfies pred, found through the index when pred names an API or a package.
func holding(src *source, pred predicate) []*channelIndex {
	var pool []*channelIndex
	switch {
	case pred.gvk() != nil:
		pool = src.byGVK[*pred.gvk()]
	case pred.pkgName() != "":
		if p := src.packages[pred.pkgName()]; p != nil {
			pool = p.channels
		}
	default:
		pool = src.channels
	}
	var out []*channelIndex
	for _, ch := range pool {
		if slices.ContainsFunc(ch.entries, pred.test) {
			out = append(out, ch)
		}
	}
	return out
}
