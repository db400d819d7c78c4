package catalog

import (
	"slices"
	"strings"
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

// cycles finds every cycle made of replaces edges and closed by one replaces or skips edge,
// as operator-registry searches them. Each cycle is written in replaces direction and
// closed on its first name ("a", "b", "a": a replaces b, b replaces or skips a); a pure
// replaces cycle is reported once, starting from its smallest name.
func (g *channelGraph) cycles() [][]string {
	seen := map[string]bool{}
	var out [][]string
	for _, start := range g.entries {
		var path []*graphNode
		onPath := map[*graphNode]bool{}
		for cur := start; cur != nil && !onPath[cur]; cur = cur.replaces {
			path = append(path, cur)
			onPath[cur] = true
			closedByReplaces := cur.replaces == start
			closedBySkip := slices.Contains(cur.skips, start)
			if !closedByReplaces && !closedBySkip {
				continue
			}
			names := make([]string, len(path))
			for i, n := range path {
				names[i] = n.name
			}
			if closedByReplaces {
				names = rotateToSmallest(names)
			}
			key := strings.Join(names, "\x00")
			if !seen[key] {
				seen[key] = true
				out = append(out, append(names, names[0]))
			}
			if closedByReplaces {
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return slices.Compare(a, b) })
	return out
}

func rotateToSmallest(names []string) []string {
	i := slices.Index(names, slices.Min(names))
	return append(slices.Clone(names[i:]), names[:i]...)
}

// stranded walks replaces from the one head — a node skipped by an earlier node of the walk
// ends it, for skipped entries are leaves — and returns, sorted, every node neither on that
// walk nor skipped by it.
func (g *channelGraph) stranded(head string) []string {
	chain := map[*graphNode]bool{}
	skipped := map[*graphNode]bool{}
	for cur := g.nodes[head]; cur != nil && !skipped[cur] && !chain[cur]; cur = cur.replaces {
		chain[cur] = true
		for _, s := range cur.skips {
			skipped[s] = true
		}
	}
	var out []string
	for name, n := range g.nodes {
		if !chain[n] && !skipped[n] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Heads returns the channel's heads as operator-registry computes them: the entries that no
// other entry replaces or skips, sorted by name. A valid channel has exactly one.
func (c *Channel) Heads() []string {
	return newChannelGraph(c).heads()
}
