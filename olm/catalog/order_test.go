package catalog

import (
	"errors"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/google/go-cmp/cmp"
)

func TestChannelOrder(t *testing.T) {
	tests := []struct {
		name    string
		entries []ChannelEntry
		want    []string
		wantErr *ChannelOrderError
		message string
	}{
		{
			// seeds 004, "Example upgrade path": 0.1.3 replaces 0.1.2, which replaces 0.1.1.
			name: "seed upgrade path 0.1.1 -> 0.1.2 -> 0.1.3",
			entries: []ChannelEntry{
				entry("example.v0.1.1"),
				entry("example.v0.1.2").replaces("example.v0.1.1"),
				entry("example.v0.1.3").replaces("example.v0.1.2"),
			},
			want: []string{"example.v0.1.3", "example.v0.1.2", "example.v0.1.1"},
		},
		{
			// seeds 004, "Skipping upgrades": etcdoperator.v0.9.2 replaces v0.9.0 and skips the
			// bad v0.9.1, which is dropped from the order (never installed on the way up).
			name: "seed skips example",
			entries: []ChannelEntry{
				entry("etcdoperator.v0.9.0"),
				entry("etcdoperator.v0.9.1").replaces("etcdoperator.v0.9.0"),
				entry("etcdoperator.v0.9.2").replaces("etcdoperator.v0.9.0").skips("etcdoperator.v0.9.1"),
			},
			want: []string{"etcdoperator.v0.9.2", "etcdoperator.v0.9.0"},
		},
		{
			// seeds 004, "Replacing multiple Operators", as catalogs publish it: the skipRange
			// head also replaces its predecessor. skipRange is no edge for the order.
			name: "seed skipRange example with replaces",
			entries: []ChannelEntry{
				entry("elasticsearch-operator.v4.1.0"),
				entry("elasticsearch-operator.v4.1.1").replaces("elasticsearch-operator.v4.1.0"),
				entry("elasticsearch-operator.v4.1.2").replaces("elasticsearch-operator.v4.1.1").skipRange(">=4.1.0 <4.1.2"),
			},
			want: []string{"elasticsearch-operator.v4.1.2", "elasticsearch-operator.v4.1.1", "elasticsearch-operator.v4.1.0"},
		},
		{
			// The seed's CSV alone: a skipRange without replaces leaves two chains, and OLM's
			// resolver cannot order the channel.
			name: "seed skipRange example without replaces",
			entries: []ChannelEntry{
				entry("elasticsearch-operator.v4.1.0"),
				entry("elasticsearch-operator.v4.1.1").replaces("elasticsearch-operator.v4.1.0"),
				entry("elasticsearch-operator.v4.1.2").skipRange(">=4.1.0 <4.1.2"),
			},
			wantErr: &ChannelOrderError{Package: "pkg", Channel: "stable", Failure: OrderMultipleChains,
				Chains: []string{"elasticsearch-operator.v4.1.1...elasticsearch-operator.v4.1.0", "elasticsearch-operator.v4.1.2"}},
			message: `a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "stable" of package "pkg": elasticsearch-operator.v4.1.1...elasticsearch-operator.v4.1.0, elasticsearch-operator.v4.1.2`,
		},
		{
			// seeds 004, "Z-stream support": the new z-stream release replaces the last one and
			// skips every earlier release of its minor, so all of them update straight to it.
			name: "seed z-stream graph",
			entries: []ChannelEntry{
				entry("op.v1.0.0"),
				entry("op.v1.0.1").replaces("op.v1.0.0"),
				entry("op.v1.0.2").replaces("op.v1.0.1"),
				entry("op.v1.1.0").replaces("op.v1.0.2"),
				entry("op.v1.0.3").replaces("op.v1.0.2").skips("op.v1.0.0", "op.v1.0.1"),
				entry("op.v1.1.1").replaces("op.v1.1.0").skips("op.v1.0.3"),
			},
			want: []string{"op.v1.1.1", "op.v1.1.0", "op.v1.0.2"},
		},
		{
			// OLM's TestSortChannel: a skipped entry is left out, but the walk goes on
			// through its replaces.
			name: "walk passes through a skipped entry",
			entries: []ChannelEntry{
				entry("a.v1"),
				entry("a.v2").replaces("a.v1"),
				entry("a.v3").replaces("a.v2").skips("a.v2"),
			},
			want: []string{"a.v3", "a.v1"},
		},
		{
			name: "edges to names outside the channel count for nothing",
			entries: []ChannelEntry{
				entry("a.v2").replaces("a.v1").skips("a.v0"),
			},
			want: []string{"a.v2"},
		},
		{
			name:    "every entry replaced: no heads",
			entries: []ChannelEntry{entry("a.v1").replaces("a.v2"), entry("a.v2").replaces("a.v1")},
			wantErr: &ChannelOrderError{Package: "pkg", Channel: "stable", Failure: OrderNoHeads},
			message: `no channel heads (entries not replaced by another entry) found in channel "stable" of package "pkg"`,
		},
		{
			name: "cycle below the head",
			entries: []ChannelEntry{
				entry("a.v3").replaces("a.v2"),
				entry("a.v2").replaces("a.v1"),
				entry("a.v1").replaces("a.v2"),
			},
			wantErr: &ChannelOrderError{Package: "pkg", Channel: "stable", Failure: OrderCycle, Head: "a.v3"},
			message: `a cycle exists in the chain of replacement beginning with "a.v3" in channel "stable" of package "pkg"`,
		},
		{
			// OLM's TestSolveOperators_WithoutChannelOrder... "two side chains".
			name: "two chains",
			entries: []ChannelEntry{
				entry("packageA.side1.v1"),
				entry("packageA.side1.v2").replaces("packageA.side1.v1"),
				entry("packageA.side2.v1"),
				entry("packageA.side2.v2").replaces("packageA.side2.v1"),
			},
			wantErr: &ChannelOrderError{Package: "pkg", Channel: "stable", Failure: OrderMultipleChains,
				Chains: []string{"packageA.side1.v2...packageA.side1.v1", "packageA.side2.v2...packageA.side2.v1"}},
			message: `a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "stable" of package "pkg": packageA.side1.v2...packageA.side1.v1, packageA.side2.v2...packageA.side2.v1`,
		},
		{
			name:    "empty channel",
			entries: nil,
			want:    []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := channel("pkg", "stable", tt.entries...)
			got, err := ch.Order()
			if tt.wantErr != nil {
				var oerr *ChannelOrderError
				if !errors.As(err, &oerr) {
					t.Fatalf("Order() error = %v, want %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.wantErr, oerr); diff != "" {
					t.Errorf("Order() error (-want +got):\n%s", diff)
				}
				if err.Error() != tt.message {
					t.Errorf("message:\n got %s\nwant %s", err, tt.message)
				}
				return
			}
			if err != nil {
				t.Fatalf("Order() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("Order() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChannelHeads(t *testing.T) {
	tests := []struct {
		name    string
		entries []ChannelEntry
		want    []string
	}{
		{"one head", []ChannelEntry{entry("a.v1"), entry("a.v2").replaces("a.v1")}, []string{"a.v2"}},
		{"skipped entries are not heads", []ChannelEntry{entry("a.v1"), entry("a.v2").skips("a.v1")}, []string{"a.v2"}},
		{"skipRange makes no edge", []ChannelEntry{entry("a.v1"), entry("a.v2").skipRange("<2.0.0")}, []string{"a.v1", "a.v2"}},
		{"a missing replaces target is never a head", []ChannelEntry{entry("a.v2").replaces("a.v1")}, []string{"a.v2"}},
		{"cycle", []ChannelEntry{entry("a.v1").replaces("a.v2"), entry("a.v2").replaces("a.v1")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, channel("a", "stable", tt.entries...).Heads()); diff != "" {
				t.Errorf("Heads() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChannelEntryCanReplace(t *testing.T) {
	v := func(s string) *semver.Version { x := semver.MustParse(s); return &x }
	// seeds 004: etcdoperator.v0.9.2 replaces v0.9.0 and skips v0.9.1; elasticsearch's
	// v4.1.2 has skipRange ">=4.1.0 <4.1.2".
	etcd := entry("etcdoperator.v0.9.2").replaces("etcdoperator.v0.9.0").skips("etcdoperator.v0.9.1")
	es := entry("elasticsearch-operator.v4.1.2").skipRange(">=4.1.0 <4.1.2")
	tests := []struct {
		name    string
		e       ChannelEntry
		from    string
		version *semver.Version
		want    bool
	}{
		{"replaces", etcd, "etcdoperator.v0.9.0", v("0.9.0"), true},
		{"skips", etcd, "etcdoperator.v0.9.1", v("0.9.1"), true},
		{"neither", etcd, "etcdoperator.v0.6.1", v("0.6.1"), false},
		{"skipRange contains the version", es, "elasticsearch-operator.v4.1.1", v("4.1.1"), true},
		{"skipRange lower bound", es, "elasticsearch-operator.v4.1.0", v("4.1.0"), true},
		{"skipRange excludes the head's own version", es, "elasticsearch-operator.v4.1.2", v("4.1.2"), false},
		{"skipRange and an unknown version", es, "elasticsearch-operator.v4.1.1", nil, false},
		{"a pre-release below the range's end", es, "x", v("4.1.2-rc1"), true},
		{"a skipRange OLM cannot parse matches nothing", entry("a.v2").skipRange("<v2.0.0"), "a.v1", v("1.0.0"), false},
		{"an empty name replaces nothing", entry("a.v2"), "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.CanReplace(tt.from, tt.version); got != tt.want {
				t.Errorf("CanReplace(%q, %v) = %v, want %v", tt.from, tt.version, got, tt.want)
			}
		})
	}
}
