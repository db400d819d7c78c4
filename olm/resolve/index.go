package resolve

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/blang/semver/v4"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
)

// An entry is one bundle as the resolver sees it: a bundle in one channel of one catalog
// (the same bundle in two channels is two entries, as in OLM), or a CSV installed in the
// namespace (OLM's virtual catalog @existing/<namespace>).
type entry struct {
	// id is OLM's identifier: <catalog>/<catalogNamespace>/<channel>/<csv>, or
	// @existing/<namespace>//<csv> for an installed CSV.
	id   string
	name string
	// pkg is the olm.package the entry belongs to ("" for an installed CSV whose package
	// cannot be told).
	pkg string

	channel *channelIndex // catalog entries only
	edge    catalog.ChannelEntry
	bundle  *catalog.Bundle // catalog entries only

	csv *v1alpha1.ClusterServiceVersion // installed entries only

	version  *semver.Version
	props    []catalog.Property // in the order the source gives them
	provides []catalog.GVK
	labels   []string
	// deprecated is the legacy olm.deprecated property, which makes OLM refuse the bundle.
	deprecated bool
}

func (e *entry) installed() bool { return e.csv != nil }

// source returns the catalog the entry comes from; nil for an installed CSV.
func (e *entry) source() *source {
	if e.channel == nil {
		return nil
	}
	return e.channel.pkg.src
}

// source is one visible catalog, indexed for resolution. It is built once per Resolver and
// only read afterwards, so one Resolver may serve many goroutines.
type source struct {
	key      CatalogKey
	priority int
	err      error
	packages map[string]*pkgIndex
	// byGVK lists, for every API some bundle provides, the channels holding such a bundle.
	byGVK map[catalog.GVK][]*channelIndex
	// channels are all channels, by package then channel name.
	channels []*channelIndex
	entries  int
}

type pkgIndex struct {
	src      *source
	pkg      *catalog.Package
	channels []*channelIndex // by name
}

func (p *pkgIndex) channel(name string) *channelIndex {
	for _, ch := range p.channels {
		if ch.ch.Name == name {
			return ch
		}
	}
	return nil
}

// defaultChannel is the channel a Subscription without spec.channel follows: the package's
// default channel, or its only channel.
func (p *pkgIndex) defaultChannel() *channelIndex {
	if ch := p.channel(p.pkg.DefaultChannel); ch != nil {
		return ch
	}
	if len(p.channels) == 1 {
		return p.channels[0]
	}
	return nil
}

type channelIndex struct {
	pkg       *pkgIndex
	ch        *catalog.Channel
	isDefault bool
	// entries are the channel's entries that have a bundle (an entry without one orders the
	// channel but cannot be installed; Validate reports it), in the order written.
	entries []*entry
	byName  map[string]*entry
	// order is the channel in OLM's preference order (head first, skipped entries dropped,
	// entries without a bundle left out); orderErr is OLM's error when the channel cannot be ordered.
	order    []*entry
	orderErr error
}

func (c *channelIndex) head() *entry {
	if c.orderErr != nil || len(c.order) == 0 {
		return nil
	}
	return c.order[0]
}

func newSource(c Catalog) *source {
	s := &source{key: c.Key(), priority: c.Priority, err: c.Err, packages: map[string]*pkgIndex{}, byGVK: map[catalog.GVK][]*channelIndex{}}
	if c.Content == nil {
		if s.err == nil {
			s.err = fmt.Errorf("catalog %s has no content", s.key)
		}
		return s
	}
	for _, p := range c.Content.Packages {
		if _, dup := s.packages[p.Name]; dup {
			continue // a package given twice is a catalog defect (reported by Validate); the first counts
		}
		pi := &pkgIndex{src: s, pkg: p}
		s.packages[p.Name] = pi
		for _, ch := range p.Channels {
			if pi.channel(ch.Name) != nil {
				continue // a channel given twice: the first counts, as Package.Channel does
			}
			ci := newChannelIndex(pi, ch)
			pi.channels = append(pi.channels, ci)
			s.channels = append(s.channels, ci)
			s.entries += len(ci.entries)
			for _, gvk := range ci.provided() {
				s.byGVK[gvk] = append(s.byGVK[gvk], ci)
			}
		}
	}
	return s
}

func newChannelIndex(p *pkgIndex, ch *catalog.Channel) *channelIndex {
	ci := &channelIndex{pkg: p, ch: ch, isDefault: ch.Name == p.pkg.DefaultChannel, byName: make(map[string]*entry, len(ch.Entries))}
	for _, ce := range ch.Entries {
		b := p.pkg.Bundle(ce.Name)
		if b == nil {
			continue
		}
		e := newCatalogEntry(ci, ce, b)
		ci.entries = append(ci.entries, e)
		ci.byName[e.name] = e
	}
	order, err := ch.Order()
	if err != nil {
		ci.orderErr = err
		return ci
	}
	for _, ce := range order {
		if e, ok := ci.byName[ce.Name]; ok {
			ci.order = append(ci.order, e)
		}
	}
	return ci
}

// provided are the APIs the channel's bundles provide, without repeats.
func (c *channelIndex) provided() []catalog.GVK {
	var out []catalog.GVK
	for _, e := range c.entries {
		for _, g := range e.provides {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

func newCatalogEntry(ch *channelIndex, ce catalog.ChannelEntry, b *catalog.Bundle) *entry {
	src := ch.pkg.src
	e := &entry{
		id:      fmt.Sprintf("%s/%s/%s/%s", src.key.Name, src.key.Namespace, ch.ch.Name, ce.Name),
		name:    ce.Name,
		pkg:     b.Package,
		channel: ch,
		edge:    ce,
		bundle:  b,
		props:   servedProperties(b.Properties),
	}
	if bp, err := b.Props(); bp != nil {
		_ = err // a property that cannot be read is a catalog problem (Validate); the others count
		if pp, ok := bp.Package(); ok && pp.PackageName != "" {
			e.pkg = pp.PackageName
		}
		e.provides = bp.Provides
		e.labels = bp.Labels
		e.deprecated = bp.Deprecated
	}
	if hasVersion(b) {
		v := b.Version
		e.version = &v
	}
	return e
}

// hasVersion reports whether the bundle's olm.package version parsed (Version is zero when
// it did not, and 0.0.0 is no real bundle's version).
func hasVersion(b *catalog.Bundle) bool {
	return !b.Version.Equals(semver.Version{})
}

// catalogOrder sorts catalogs as OLM prefers them for a dependency of a bundle from
// preferred (nil for an installed CSV): that catalog first, then higher spec.priority,
// then catalogs in the namespace before the global ones, then by name.
func catalogOrder(sources []*source, preferred *source, namespace string) []*source {
	out := slices.Clone(sources)
	slices.SortStableFunc(out, func(a, b *source) int {
		if a == preferred || b == preferred {
			if a == b {
				return 0
			}
			if a == preferred {
				return -1
			}
			return 1
		}
		if a.priority != b.priority {
			return cmp.Compare(b.priority, a.priority)
		}
		if a.key.Namespace != b.key.Namespace {
			if a.key.Namespace == namespace {
				return -1
			}
			if b.key.Namespace == namespace {
				return 1
			}
		}
		return cmp.Or(cmp.Compare(a.key.Name, b.key.Name), cmp.Compare(a.key.Namespace, b.key.Namespace))
	})
	return out
}

// sortChannels puts channels in OLM's order for dependency candidates within one catalog:
// default channels first, then by package name, then by channel name.
func sortChannels(chs []*channelIndex) {
	slices.SortStableFunc(chs, func(a, b *channelIndex) int {
		if a.isDefault != b.isDefault {
			if a.isDefault {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.pkg.pkg.Name, b.pkg.pkg.Name), cmp.Compare(a.ch.Name, b.ch.Name))
	})
}
