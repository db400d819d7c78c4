package catalog

import (
	"slices"
)

// channelGraph is a channel's upgrade graph as operator-registry validates it: one node per
// entry, plus one for every name an entry replaces that is not an entry itself (so that a
// replaces edge leaving the channel anywhere but at the tail of the head's chain strands
// that name). A skip of a name that is not an entry adds no node.
type channelGraph struct {
	nodes   map[string]*graphNode
	entries []*graphNode // entry nodes in channel order
}

type graphNode struct {
	name       string
	entry      *ChannelEntry // nil for a name only a replaces edge mentions
	replaces   *graphNode
	replacedBy []*graphNode
	skips      []*graphNode // entries only
	skippedBy  []*graphNode
}

func newChannelGraph(c *Channel) *channelGraph {
	g := &channelGraph{nodes: make(map[string]*graphNode, len(c.Entries))}
	for i := range c.Entries {
		e := &c.Entries[i]
		if _, dup := g.nodes[e.Name]; dup {
			continue // a duplicate entry is reported on its own; the first one counts
		}
		n := &graphNode{name: e.Name, entry: e}
		g.nodes[e.Name] = n
		g.entries = append(g.entries, n)
	}
	for _, n := range g.entries {
		if r := n.entry.Replaces; r != "" {
			target, ok := g.nodes[r]
			if !ok {
				target = &graphNode{name: r}
				g.nodes[r] = target
			}
			n.replaces = target
			target.replacedBy = append(target.replacedBy, n)
		}
		for _, s := range n.entry.Skips {
			if target, ok := g.nodes[s]; ok && target.entry != nil {
				n.skips = append(n.skips, target)
				target.skippedBy = append(target.skippedBy, n)
			}
		}
	}
	return g
}

// heads are the entries nothing replaces or skips, sorted by name.
func (g *channelGraph) heads() []string {
	var heads []string
	for _, n := range g.entries {
		if len(n.replacedBy) == 0 && len(n.skippedBy) == 0 {
			heads = append(heads, n.name)
		}
	}
	slices.Sort(heads)
	return heads
}

// replacesChain walks the replaces chain from the channel's one head as operator-registry's
// model validation does (alpha/model/model.go, Channel.validateReplacesChain): a replaces
// edge to a name some entry skips ends the walk; a replaces edge back into the chain is a
// cycle, returned as the path from the node where the walk re-entered it around to that
// node again ("b", "c", "b" for head → b → c → b); otherwise the stranded entries are
// returned, sorted: those neither on the chain nor skipped by any entry. A replaces edge
// leaving the channel ends the walk (the tail may replace what is not there).
func (g *channelGraph) replacesChain(head string) (cycle, stranded []string) {
	skipped := map[string]bool{}
	for _, n := range g.entries {
		for _, s := range n.entry.Skips {
			skipped[s] = true
		}
	}
	onChain := map[string]bool{head: true}
	var walked []string // the chain from the head, each name once
	for cur := g.nodes[head]; cur != nil && cur.entry != nil; {
		if !slices.Contains(walked, cur.name) {
			walked = append(walked, cur.name)
		}
		next := cur.entry.Replaces
		if skipped[next] {
			break
		}
		if onChain[next] {
			i := slices.Index(walked, next)
			return append(slices.Clone(walked[i:]), next), nil
		}
		onChain[next] = true
		cur = g.nodes[next]
	}
	for _, n := range g.entries {
		if !onChain[n.name] && !skipped[n.name] {
			stranded = append(stranded, n.name)
		}
	}
	slices.Sort(stranded)
	return nil, stranded
}

// Heads returns the channel's heads as operator-registry computes them: the entries that no
// other entry replaces or skips, sorted by name. A valid channel has exactly one.
func (c *Channel) Heads() []string {
	return newChannelGraph(c).heads()
}
