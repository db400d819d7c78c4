package catalog

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// EdgeKind is the kind of an upgrade edge.
type EdgeKind string

// The three ways one entry of a channel upgrades from another.
const (
	EdgeReplaces  EdgeKind = "replaces"
	EdgeSkips     EdgeKind = "skips"
	EdgeSkipRange EdgeKind = "skipRange"
)

// Graph is the upgrade graph of one package: per channel its nodes and edges, the head(s)
// marked, and the order OLM's resolver would use (or why there is none).
type Graph struct {
	Package        string         `json:"package"`
	DefaultChannel string         `json:"defaultChannel,omitempty"`
	Channels       []ChannelGraph `json:"channels"`
}

// ChannelGraph is one channel's upgrade graph.
type ChannelGraph struct {
	Name    string `json:"name"`
	Default bool   `json:"default,omitempty"`
	// Heads are the entries nothing replaces or skips; a valid channel has exactly one.
	Heads []string `json:"heads"`
	// Order is the resolver's order, head first (Channel.Order), when there is one.
	Order      []string `json:"order,omitempty"`
	OrderError string   `json:"orderError,omitempty"`
	// Problems are the channel's validation errors.
	Problems []string    `json:"problems,omitempty"`
	Nodes    []GraphNode `json:"nodes"`
	Edges    []GraphEdge `json:"edges"`
}

// GraphNode is a bundle in a channel, or a name an edge points to outside it.
type GraphNode struct {
	Name      string `json:"name"`
	Version   string `json:"version,omitempty"`
	Head      bool   `json:"head,omitempty"`
	SkipRange string `json:"skipRange,omitempty"`
	// Skipped nodes are named in some entry's skips: OLM never installs them on the way up.
	Skipped bool `json:"skipped,omitempty"`
	// External nodes are not entries of the channel; an edge names them.
	External bool `json:"external,omitempty"`
}

// GraphEdge says that From upgrades from To: From replaces To, skips To, or covers To's
// version with its skipRange.
type GraphEdge struct {
	From string   `json:"from"`
	To   string   `json:"to"`
	Kind EdgeKind `json:"kind"`
}

// ErrNotFound is returned when a package or channel asked for is not in the catalog.
var ErrNotFound = errors.New("not found")

// BuildGraph builds the upgrade graph of a package: every channel, or only the one named.
// skipRange edges go to the channel's entries whose bundle version is in the range.
func BuildGraph(c *Catalog, pkg, channel string) (*Graph, error) {
	p := c.Package(pkg)
	if p == nil {
		return nil, fmt.Errorf("package %q: %w", pkg, ErrNotFound)
	}
	v := &problems{}
	validatePackage(v, p)
	g := &Graph{Package: p.Name, DefaultChannel: p.DefaultChannel}
	for _, ch := range p.Channels {
		if channel != "" && ch.Name != channel {
			continue
		}
		g.Channels = append(g.Channels, buildChannelGraph(p, ch, v.list))
	}
	if channel != "" && len(g.Channels) == 0 {
		return nil, fmt.Errorf("package %q, channel %q: %w", pkg, channel, ErrNotFound)
	}
	return g, nil
}

func buildChannelGraph(p *Package, ch *Channel, problems Problems) ChannelGraph {
	cg := ChannelGraph{Name: ch.Name, Default: ch.Name == p.DefaultChannel, Heads: ch.Heads()}
	for _, prob := range problems {
		if prob.Channel == ch.Name && prob.Severity == SeverityError {
			msg := prob.Message
			if prob.Bundle != "" {
				msg = fmt.Sprintf("bundle %q: %s", prob.Bundle, msg)
			}
			cg.Problems = append(cg.Problems, msg)
		}
	}
	order, err := ch.Order()
	if err != nil {
		cg.OrderError = err.Error()
	}
	for _, e := range order {
		cg.Order = append(cg.Order, e.Name)
	}
	cg.Nodes = graphNodes(p, ch, cg.Order, cg.Heads)
	cg.Edges = graphEdges(p, ch)
	if cg.Edges == nil {
		cg.Edges = []GraphEdge{} // JSON readers get a list, never null
	}
	return cg
}

// graphNodes lists the channel's entries — in the resolver's order when there is one, the
// rest by version, newest first — then the names outside the channel that edges point to.
func graphNodes(p *Package, ch *Channel, order, heads []string) []GraphNode {
	skipped := map[string]bool{}
	for _, e := range ch.Entries {
		for _, s := range e.Skips {
			skipped[s] = true
		}
	}
	rank := map[string]int{}
	for i, name := range order {
		rank[name] = i
	}
	entries := slices.Clone(ch.Entries)
	slices.SortStableFunc(entries, func(a, b ChannelEntry) int {
		ra, oka := rank[a.Name]
		rb, okb := rank[b.Name]
		switch {
		case oka && okb:
			return cmp.Compare(ra, rb)
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return -compareVersions(p, a.Name, b.Name)
	})
	nodes := []GraphNode{}
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		nodes = append(nodes, GraphNode{
			Name: e.Name, Version: bundleVersion(p, e.Name), Head: slices.Contains(heads, e.Name),
			SkipRange: e.SkipRange, Skipped: skipped[e.Name],
		})
	}
	var external []string
	for _, e := range ch.Entries {
		for _, name := range append([]string{e.Replaces}, e.Skips...) {
			if name != "" && !seen[name] {
				seen[name] = true
				external = append(external, name)
			}
		}
	}
	slices.Sort(external)
	for _, name := range external {
		nodes = append(nodes, GraphNode{Name: name, Version: bundleVersion(p, name), Skipped: skipped[name], External: true})
	}
	return nodes
}

func graphEdges(p *Package, ch *Channel) []GraphEdge {
	var edges []GraphEdge
	for _, e := range ch.Entries {
		if e.Replaces != "" {
			edges = append(edges, GraphEdge{From: e.Name, To: e.Replaces, Kind: EdgeReplaces})
		}
		for _, s := range e.Skips {
			edges = append(edges, GraphEdge{From: e.Name, To: s, Kind: EdgeSkips})
		}
		r, err := e.ParseSkipRange(p.Name)
		if r == nil || err != nil {
			continue
		}
		for _, other := range ch.Entries {
			b := p.Bundle(other.Name)
			if other.Name != e.Name && b != nil && hasVersion(b) && r(b.Version) {
				edges = append(edges, GraphEdge{From: e.Name, To: other.Name, Kind: EdgeSkipRange})
			}
		}
	}
	return slices.Compact(edges)
}

// hasVersion reports whether the bundle's version was read (rather than left zero).
func hasVersion(b *Bundle) bool {
	props, _ := b.Props()
	if props == nil {
		return false
	}
	pp, ok := props.Package()
	return ok && pp.Version != "" && b.Version.String() == pp.Version
}

func bundleVersion(p *Package, name string) string {
	if b := p.Bundle(name); b != nil && hasVersion(b) {
		return b.Version.String()
	}
	return ""
}

func compareVersions(p *Package, a, b string) int {
	ba, bb := p.Bundle(a), p.Bundle(b)
	if ba == nil || bb == nil {
		return cmp.Compare(a, b)
	}
	return compareBundles(ba, bb)
}

// Graph output formats.
const (
	GraphText    = "text"
	GraphJSON    = "json"
	GraphDOT     = "dot"
	GraphMermaid = "mermaid"
)

// WriteGraph writes the graph as text (for a person), JSON, Graphviz DOT or Mermaid.
func WriteGraph(w io.Writer, g *Graph, format string) error {
	switch format {
	case GraphText, "":
		return writeGraphText(w, g)
	case GraphJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(g)
	case GraphDOT:
		return writeGraphDOT(w, g)
	case GraphMermaid:
		return writeGraphMermaid(w, g)
	}
	return fmt.Errorf("unknown graph format %q: use text, json, dot or mermaid", format)
}

// errWriter keeps the first write error, so that writers can print freely and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (ew *errWriter) printf(format string, args ...any) {
	if ew.err == nil {
		_, ew.err = fmt.Fprintf(ew.w, format, args...)
	}
}

func writeGraphText(w io.Writer, g *Graph) error {
	ew := &errWriter{w: w}
	ew.printf("package %s (default channel: %s)\n", g.Package, orNone(g.DefaultChannel))
	for _, ch := range g.Channels {
		writeChannelText(ew, ch)
	}
	return ew.err
}

func writeChannelText(ew *errWriter, ch ChannelGraph) {
	ew.printf("\nchannel %s", ch.Name)
	if ch.Default {
		ew.printf(" (default)")
	}
	ew.printf("\n  heads: %s\n", orNone(strings.Join(ch.Heads, ", ")))
	if ch.OrderError != "" {
		ew.printf("  no upgrade order: %s\n", ch.OrderError)
	}
	for _, p := range ch.Problems {
		ew.printf("  error: %s\n", p)
	}
	for _, n := range ch.Nodes {
		writeNodeText(ew, n, ch.Edges)
	}
}

// writeNodeText writes a node and the edges leaving it: replaces and skips one per line,
// the skipRange with the entries it covers.
func writeNodeText(ew *errWriter, n GraphNode, edges []GraphEdge) {
	ew.printf("  %s", n.Name)
	if n.Version != "" {
		ew.printf(" (%s)", n.Version)
	}
	if tags := nodeTags(n); len(tags) > 0 {
		ew.printf(" [%s]", strings.Join(tags, ", "))
	}
	ew.printf("\n")
	var covered []string
	for _, e := range edges {
		switch {
		case e.From != n.Name:
		case e.Kind == EdgeSkipRange:
			covered = append(covered, e.To)
		default:
			ew.printf("    %s %s\n", e.Kind, e.To)
		}
	}
	if n.SkipRange != "" {
		ew.printf("    skipRange %q covers %s\n", n.SkipRange, orNone(strings.Join(covered, ", ")))
	}
}

func nodeTags(n GraphNode) []string {
	var tags []string
	if n.Head {
		tags = append(tags, "head")
	}
	if n.Skipped {
		tags = append(tags, "skipped")
	}
	if n.External {
		tags = append(tags, "not in channel")
	}
	return tags
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func writeGraphDOT(w io.Writer, g *Graph) error {
	ew := &errWriter{w: w}
	ew.printf("digraph %s {\n  rankdir=TB;\n  node [shape=box];\n", dotQuote(g.Package))
	for i, ch := range g.Channels {
		label := "channel " + ch.Name
		if ch.Default {
			label += " (default)"
		}
		ew.printf("  subgraph %s {\n    label=%s;\n", dotQuote(fmt.Sprintf("cluster_%d", i)), dotQuote(label))
		for _, n := range ch.Nodes {
			attrs := []string{"label=" + dotQuote(nodeLabel(n, "\n"))}
			switch {
			case n.Head:
				attrs = append(attrs, "style=bold", "peripheries=2")
			case n.External:
				attrs = append(attrs, "style=dashed")
			case n.Skipped:
				attrs = append(attrs, "style=filled", `fillcolor="#eeeeee"`)
			}
			ew.printf("    %s [%s];\n", dotQuote(ch.Name+"/"+n.Name), strings.Join(attrs, ", "))
		}
		for _, e := range ch.Edges {
			style := map[EdgeKind]string{EdgeReplaces: "solid", EdgeSkips: "dashed", EdgeSkipRange: "dotted"}[e.Kind]
			ew.printf("    %s -> %s [label=%s, style=%s];\n", dotQuote(ch.Name+"/"+e.From), dotQuote(ch.Name+"/"+e.To), dotQuote(string(e.Kind)), style)
		}
		ew.printf("  }\n")
	}
	ew.printf("}\n")
	return ew.err
}

func nodeLabel(n GraphNode, sep string) string {
	label := n.Name
	if n.Version != "" {
		label += sep + n.Version
	}
	if tags := nodeTags(n); len(tags) > 0 {
		label += sep + "(" + strings.Join(tags, ", ") + ")"
	}
	return label
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func writeGraphMermaid(w io.Writer, g *Graph) error {
	ew := &errWriter{w: w}
	ew.printf("flowchart TD\n")
	for i, ch := range g.Channels {
		label := "channel " + ch.Name
		if ch.Default {
			label += " (default)"
		}
		ew.printf("  subgraph c%d[%s]\n", i, mermaidQuote(label))
		ids := map[string]string{}
		for j, n := range ch.Nodes {
			id := fmt.Sprintf("c%dn%d", i, j)
			ids[n.Name] = id
			left, right := "[", "]"
			if n.Head {
				left, right = "[[", "]]"
			} else if n.External {
				left, right = "([", "])"
			}
			ew.printf("    %s%s%s%s\n", id, left, mermaidQuote(nodeLabel(n, "<br/>")), right)
		}
		for _, e := range ch.Edges {
			arrow := map[EdgeKind]string{EdgeReplaces: "-->", EdgeSkips: "-.->", EdgeSkipRange: "-.->"}[e.Kind]
			ew.printf("    %s %s|%s| %s\n", ids[e.From], arrow, e.Kind, ids[e.To])
		}
		ew.printf("  end\n")
	}
	return ew.err
}

func mermaidQuote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, "#quot;") + `"`
}
