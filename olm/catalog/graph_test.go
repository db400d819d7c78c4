package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// graphFixture is etcd with the seed's skips example and a skipRange in alpha, a replaces
// edge leaving beta, and two heads in fast.
func graphFixture() *Package {
	return pkgWith("etcd", "alpha",
		channel("etcd", "alpha",
			entry("etcd.v0.9.0"),
			entry("etcd.v0.9.1").replaces("etcd.v0.9.0"),
			entry("etcd.v0.9.2").replaces("etcd.v0.9.0").skips("etcd.v0.9.1").skipRange(">=0.9.0 <0.9.2"),
		),
		channel("etcd", "beta", entry("etcd.v0.9.4").replaces("etcd.v0.9.2")),
		channel("etcd", "fast", entry("etcd.v0.9.4"), entry("etcd.v1.0.0")),
	)
}

func TestBuildGraph(t *testing.T) {
	g, err := BuildGraph(catalogOf(graphFixture()), "etcd", "")
	if err != nil {
		t.Fatal(err)
	}
	want := &Graph{Package: "etcd", DefaultChannel: "alpha", Channels: []ChannelGraph{
		{
			Name: "alpha", Default: true, Heads: []string{"etcd.v0.9.2"}, Order: []string{"etcd.v0.9.2", "etcd.v0.9.0"},
			Nodes: []GraphNode{
				{Name: "etcd.v0.9.2", Version: "0.9.2", Head: true, SkipRange: ">=0.9.0 <0.9.2"},
				{Name: "etcd.v0.9.0", Version: "0.9.0"},
				{Name: "etcd.v0.9.1", Version: "0.9.1", Skipped: true},
			},
			Edges: []GraphEdge{
				{From: "etcd.v0.9.1", To: "etcd.v0.9.0", Kind: EdgeReplaces},
				{From: "etcd.v0.9.2", To: "etcd.v0.9.0", Kind: EdgeReplaces},
				{From: "etcd.v0.9.2", To: "etcd.v0.9.1", Kind: EdgeSkips},
				{From: "etcd.v0.9.2", To: "etcd.v0.9.0", Kind: EdgeSkipRange},
				{From: "etcd.v0.9.2", To: "etcd.v0.9.1", Kind: EdgeSkipRange},
			},
		},
		{
			Name: "beta", Heads: []string{"etcd.v0.9.4"}, Order: []string{"etcd.v0.9.4"},
			Nodes: []GraphNode{{Name: "etcd.v0.9.4", Version: "0.9.4", Head: true}, {Name: "etcd.v0.9.2", Version: "0.9.2", External: true}},
			Edges: []GraphEdge{{From: "etcd.v0.9.4", To: "etcd.v0.9.2", Kind: EdgeReplaces}},
		},
		{
			Name: "fast", Heads: []string{"etcd.v0.9.4", "etcd.v1.0.0"},
			OrderError: `a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "fast" of package "etcd": etcd.v0.9.4, etcd.v1.0.0`,
			Problems:   []string{"multiple channel heads found in graph: etcd.v0.9.4, etcd.v1.0.0"},
			Nodes:      []GraphNode{{Name: "etcd.v1.0.0", Version: "1.0.0", Head: true}, {Name: "etcd.v0.9.4", Version: "0.9.4", Head: true}},
			Edges:      []GraphEdge{},
		},
	}}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("BuildGraph (-want +got):\n%s", diff)
	}

	var out bytes.Buffer
	if err := WriteGraph(&out, g, GraphJSON); err != nil {
		t.Fatal(err)
	}
	var back Graph
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("JSON output does not parse: %v", err)
	}
	if diff := cmp.Diff(want, &back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}

	for _, missing := range [][2]string{{"nope", ""}, {"etcd", "nope"}} {
		if _, err := BuildGraph(catalogOf(graphFixture()), missing[0], missing[1]); !errors.Is(err, ErrNotFound) {
			t.Errorf("BuildGraph(%q, %q) error = %v, want ErrNotFound", missing[0], missing[1], err)
		}
	}
}

func TestWriteGraph(t *testing.T) {
	tests := []struct {
		format, channel, want string
	}{
		{GraphText, "", `package etcd (default channel: alpha)

channel alpha (default)
  heads: etcd.v0.9.2
  etcd.v0.9.2 (0.9.2) [head]
    replaces etcd.v0.9.0
    skips etcd.v0.9.1
    skipRange ">=0.9.0 <0.9.2" covers etcd.v0.9.0, etcd.v0.9.1
  etcd.v0.9.0 (0.9.0)
  etcd.v0.9.1 (0.9.1) [skipped]
    replaces etcd.v0.9.0

channel beta
  heads: etcd.v0.9.4
  etcd.v0.9.4 (0.9.4) [head]
    replaces etcd.v0.9.2
  etcd.v0.9.2 (0.9.2) [not in channel]

channel fast
  heads: etcd.v0.9.4, etcd.v1.0.0
  no upgrade order: a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "fast" of package "etcd": etcd.v0.9.4, etcd.v1.0.0
  error: multiple channel heads found in graph: etcd.v0.9.4, etcd.v1.0.0
  etcd.v1.0.0 (1.0.0) [head]
  etcd.v0.9.4 (0.9.4) [head]
`},
		{GraphDOT, "alpha", `digraph "etcd" {
  rankdir=TB;
  node [shape=box];
  subgraph "cluster_0" {
    label="channel alpha (default)";
    "alpha/etcd.v0.9.2" [label="etcd.v0.9.2\n0.9.2\n(head)", style=bold, peripheries=2];
    "alpha/etcd.v0.9.0" [label="etcd.v0.9.0\n0.9.0"];
    "alpha/etcd.v0.9.1" [label="etcd.v0.9.1\n0.9.1\n(skipped)", style=filled, fillcolor="#eeeeee"];
    "alpha/etcd.v0.9.1" -> "alpha/etcd.v0.9.0" [label="replaces", style=solid];
    "alpha/etcd.v0.9.2" -> "alpha/etcd.v0.9.0" [label="replaces", style=solid];
    "alpha/etcd.v0.9.2" -> "alpha/etcd.v0.9.1" [label="skips", style=dashed];
    "alpha/etcd.v0.9.2" -> "alpha/etcd.v0.9.0" [label="skipRange", style=dotted];
    "alpha/etcd.v0.9.2" -> "alpha/etcd.v0.9.1" [label="skipRange", style=dotted];
  }
}
`},
		{GraphMermaid, "beta", `flowchart TD
  subgraph c0["channel beta"]
    c0n0[["etcd.v0.9.4<br/>0.9.4<br/>(head)"]]
    c0n1(["etcd.v0.9.2<br/>0.9.2<br/>(not in channel)"])
    c0n0 -->|replaces| c0n1
  end
`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			g, err := BuildGraph(catalogOf(graphFixture()), "etcd", tt.channel)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := WriteGraph(&out, g, tt.format); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if err := WriteGraph(&bytes.Buffer{}, &Graph{}, "svg"); err == nil {
		t.Error("an unknown format was accepted")
	}
}

func TestDOTQuoting(t *testing.T) {
	if got := dotQuote(`a "b" \c` + "\n"); got != `"a \"b\" \\c\n"` {
		t.Errorf("dotQuote = %s", got)
	}
	if got := mermaidQuote(`a "b"`); got != `"a #quot;b#quot;"` {
		t.Errorf("mermaidQuote = %s", got)
	}
}
