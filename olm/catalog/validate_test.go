package catalog

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	stable := func(entries ...ChannelEntry) *Channel { return channel("a", "stable", entries...) }
	linear := stable(entry("a.v1.0.0"), entry("a.v1.1.0").replaces("a.v1.0.0"))
	tests := []struct {
		name string
		pkg  func() *Package
		want []problemKey
	}{
		{
			name: "valid package",
			pkg:  func() *Package { return pkgWith("a", "stable", linear) },
		},
		{
			name: "no channels and no default channel",
			pkg:  func() *Package { return pkgWith("a", "") },
			want: []problemKey{
				errorKey(CodeNoChannels, "a", "", "", "package must contain at least one channel"),
				errorKey(CodeNoDefaultChannel, "a", "", "", "default channel must be set"),
			},
		},
		{
			name: "default channel not a channel",
			pkg:  func() *Package { return pkgWith("a", "fast", linear) },
			want: []problemKey{errorKey(CodeDefaultChannelNotFound, "a", "fast", "", "channel must contain at least one bundle")},
		},
		{
			name: "invalid package name",
			pkg:  func() *Package { return pkgWith("A_b", "stable", channel("A_b", "stable", entry("x.v1.0.0"))) },
			want: []problemKey{errorKey(CodeInvalidPackage, "A_b", "", "", `invalid package name "A_b": [a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]`)},
		},
		{
			name: "duplicate channel, empty channel",
			pkg: func() *Package {
				p := pkgWith("a", "stable", linear)
				p.Channels = append(p.Channels, channel("a", "stable", entry("a.v1.1.0")), channel("a", "beta"))
				return p
			},
			want: []problemKey{
				errorKey(CodeEmptyChannel, "a", "beta", "", "channel must contain at least one bundle"),
				errorKey(CodeDuplicateChannel, "a", "stable", "", "duplicate channel (also declared at catalog.json:2)"),
			},
		},
		{
			name: "duplicate entry and duplicate bundle",
			pkg: func() *Package {
				p := pkgWith("a", "stable", stable(entry("a.v1.0.0"), entry("a.v1.0.0")))
				p.Bundles = append(p.Bundles, bundle("a", "a.v1.0.0", "1.0.0"))
				return p
			},
			want: []problemKey{
				errorKey(CodeDuplicateVersion, "a", "", "", "duplicate versions found in bundles: [{1.0.0: [a.v1.0.0, a.v1.0.0]}]"),
				errorKey(CodeDuplicateBundle, "a", "", "a.v1.0.0", "duplicate bundle (also at catalog.json:3)"),
				errorKey(CodeDuplicateEntry, "a", "stable", "a.v1.0.0", `duplicate entry "a.v1.0.0"`),
			},
		},
		{
			name: "entry without bundle, bundle without channel",
			pkg: func() *Package {
				p := pkgWith("a", "stable", linear)
				p.Bundles[0] = bundle("a", "a.v0.9.0", "0.9.0")
				return p
			},
			want: []problemKey{
				errorKey(CodeBundleNotInChannel, "a", "", "a.v0.9.0", "not found in any channel entries"),
				errorKey(CodeMissingBundle, "a", "stable", "", `no olm.bundle blobs found in package "a" for olm.channel entries [a.v1.0.0]`),
			},
		},
		{
			name: "two versions alike",
			pkg: func() *Package {
				p := pkgWith("a", "stable", linear)
				p.Bundles[1] = bundle("a", "a.v1.1.0", "1.0.0")
				return p
			},
			want: []problemKey{errorKey(CodeDuplicateVersion, "a", "", "", "duplicate versions found in bundles: [{1.0.0: [a.v1.0.0, a.v1.1.0]}]")},
		},
		{
			name: "olm.package property missing, doubled, naming another package, bad version",
			pkg: func() *Package {
				p := pkgWith("a", "stable", stable(entry("a.v1"), entry("a.v2").replaces("a.v1"), entry("a.v3").replaces("a.v2"), entry("a.v4").replaces("a.v3")))
				p.Bundles[0] = &Bundle{Name: "a.v1", Package: "a", Image: "img"}
				p.Bundles[1] = bundle("a", "a.v2", "2.0.0", mustProperty(PropertyPackage, PackageProperty{PackageName: "a", Version: "2.0.0"}))
				p.Bundles[2] = bundle("b", "a.v3", "3.0.0")
				p.Bundles[3] = bundle("a", "a.v4", "v4.0.0")
				return p
			},
			want: []problemKey{
				errorKey(CodePackageProperty, "a", "", "a.v1", `must have exactly 1 "olm.package" property, found 0`),
				errorKey(CodePackageProperty, "a", "", "a.v2", `must have exactly 1 "olm.package" property, found 2`),
				errorKey(CodePackageProperty, "a", "", "a.v3", `package "a" does not match "olm.package" property "b"`),
				errorKey(CodeBadVersion, "a", "", "a.v4", `error parsing bundle "a.v4" version "v4.0.0": Invalid character(s) found in major number "v4"`),
			},
		},
		{
			name: "property that does not decode, bundle without image",
			pkg: func() *Package {
				p := pkgWith("a", "stable", stable(entry("a.v1.0.0")))
				p.Bundles[0] = bundle("a", "a.v1.0.0", "1.0.0", Property{Type: PropertyGVK, Value: json.RawMessage(`"not an object"`)})
				p.Bundles[0].Image = ""
				return p
			},
			want: []problemKey{
				errorKey(CodeBadProperty, "a", "", "a.v1.0.0", "parse properties: property 1 (olm.gvk): json: cannot unmarshal string into Go value of type catalog.GVK"),
				errorKey(CodeNoImage, "a", "", "a.v1.0.0", "bundle image must be set"),
			},
		},
		{
			name: "bad skipRange and empty skip name the bundle",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(entry("a.v1.0.0"), entry("a.v1.1.0").replaces("a.v1.0.0").skipRange("<v1.1.0").skips("")))
			},
			want: []problemKey{
				errorKey(CodeBadSkipRange, "a", "stable", "a.v1.1.0", `invalid skipRange "<v1.1.0": Could not parse Range "<v1.1.0": Could not parse comparator "<v" in "<v1.1.0"`),
				errorKey(CodeEmptySkip, "a", "stable", "a.v1.1.0", "skip[0] is empty"),
			},
		},
		{
			name: "multiple heads",
			pkg:  func() *Package { return pkgWith("a", "stable", stable(entry("a.v1.0.0"), entry("a.v2.0.0"))) },
			want: []problemKey{errorKey(CodeMultipleHeads, "a", "stable", "", "multiple channel heads found in graph: a.v1.0.0, a.v2.0.0")},
		},
		{
			// operator-registry finds the head before it walks (alpha/model/model.go:273): a
			// cycle with nothing above it is only "no channel head".
			name: "pure cycle: no head",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(entry("a.v1.0.0").replaces("a.v2.0.0"), entry("a.v2.0.0").replaces("a.v1.0.0")))
			},
			want: []problemKey{errorKey(CodeNoHead, "a", "stable", "", "no channel head found in graph; its replaces form a cycle: a.v1.0.0 -> a.v2.0.0 -> a.v1.0.0")},
		},
		{
			// operator-registry's "Error/CycleMultipleHops" (alpha/model/model_test.go:150-157):
			// the cycle is written from where the walk from the head enters it
			// (alpha/model/model.go:300).
			name: "cycle below a head",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(
					entry("a.v0.0.1").replaces("a.v0.0.3"),
					entry("a.v0.0.2").replaces("a.v0.0.1"),
					entry("a.v0.0.3").replaces("a.v0.0.2"),
					entry("a.v0.0.4").replaces("a.v0.0.3"),
				))
			},
			want: []problemKey{errorKey(CodeCycle, "a", "stable", "", "detected cycle in replaces chain of upgrade graph: a.v0.0.3 -> a.v0.0.2 -> a.v0.0.1 -> a.v0.0.3")},
		},
		{
			name: "self replaces",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(entry("a.v0.0.4").replaces("a.v0.0.4"), entry("a.v0.0.5").replaces("a.v0.0.4")))
			},
			want: []problemKey{errorKey(CodeCycle, "a", "stable", "", "detected cycle in replaces chain of upgrade graph: a.v0.0.4 -> a.v0.0.4")},
		},
		{
			// A loop closed by a skip is no cycle to operator-registry's walk, which follows
			// replaces only: the head's chain is the head alone, the skipped entry is not
			// stranded, the one it replaces is.
			name: "loop closed by a skip",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(entry("a.v0.0.3"), entry("a.v0.0.2").replaces("a.v0.0.1"), entry("a.v0.0.1").skips("a.v0.0.2")))
			},
			want: []problemKey{errorKey(CodeStranded, "a", "stable", "", "channel contains one or more stranded bundles: a.v0.0.1")},
		},
		{
			// operator-registry's "Error/Stranded".
			name: "stranded below a skipped entry",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(entry("a.v0.0.1"), entry("a.v0.0.2").replaces("a.v0.0.1"), entry("a.v0.0.3").skips("a.v0.0.2")))
			},
			want: []problemKey{errorKey(CodeStranded, "a", "stable", "", "channel contains one or more stranded bundles: a.v0.0.1")},
		},
		{
			// operator-registry's "Error/SkippedReplacesStranded" (olm-behaviour 6.3: an entry
			// that both replaces and skips its predecessor strands everything below).
			name: "replaces and skips the predecessor",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(entry("a.v0.0.1"), entry("a.v0.0.2").replaces("a.v0.0.1"), entry("a.v0.0.3").replaces("a.v0.0.2").skips("a.v0.0.2")))
			},
			want: []problemKey{errorKey(CodeStranded, "a", "stable", "", "channel contains one or more stranded bundles: a.v0.0.1")},
		},
		{
			name: "replaces outside the channel at the tail is tolerated",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(entry("a.v1.1.0").replaces("a.v1.0.0"), entry("a.v1.2.0").replaces("a.v1.1.0")))
			},
			want: []problemKey{infoKey(CodeReplacesOutside, "a", "stable", "a.v1.1.0", `replaces "a.v1.0.0", which is not an entry of the channel (in no bundle of the package)`)},
		},
		{
			// operator-registry counts only entries as stranded (alpha/model/model.go:278-306):
			// a name outside the channel is never one.
			name: "replaces outside the channel by a skipped entry",
			pkg: func() *Package {
				return pkgWith("a", "stable",
					stable(entry("a.v1.0.0"), entry("a.v1.1.0").replaces("a.v0.9.0"), entry("a.v1.2.0").replaces("a.v1.0.0").skips("a.v1.1.0")),
					channel("a", "old", entry("a.v0.9.0")))
			},
			want: []problemKey{
				infoKey(CodeReplacesOutside, "a", "stable", "a.v1.1.0", `replaces "a.v0.9.0", which is not an entry of the channel (in channel old)`),
			},
		},
		{
			// The case: an entry replaces a bundle the package does not have, so its
			// chain never joins the channel's. The cause comes first, as an error; OLM's
			// "multiple channel heads" follows.
			name: "replaces of an unknown bundle splits the channel",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(entry("a.v1.0.0"), entry("a.v1.1.0").replaces("a.v1.0.0"), entry("a.v1.2.0").replaces("a.v1.1.1")))
			},
			want: []problemKey{
				errorKey(CodeReplacesUnknown, "a", "stable", "a.v1.2.0", `replaces "a.v1.1.1", which is in no bundle of the package, so its chain does not join the channel's: the channel has more than one head`),
				errorKey(CodeMultipleHeads, "a", "stable", "", "multiple channel heads found in graph: a.v1.1.0, a.v1.2.0"),
			},
		},
		{
			name: "skip of a bundle the package does not have",
			pkg: func() *Package {
				return pkgWith("a", "stable", stable(entry("a.v1.0.0"), entry("a.v1.1.0").replaces("a.v1.0.0").skips("a.v1.0.1-rc1")))
			},
			want: []problemKey{infoKey(CodeSkipsMissing, "a", "stable", "a.v1.1.0", `skips "a.v1.0.1-rc1", which is not a bundle of the package`)},
		},
		{
			name: "deprecations naming nothing",
			pkg: func() *Package {
				p := pkgWith("a", "stable", linear)
				p.Deprecations = []Deprecation{
					{Reference: DeprecationReference{Schema: SchemaChannel, Name: "beta"}, Message: "gone"},
					{Reference: DeprecationReference{Schema: SchemaBundle, Name: "a.v1.0.0"}},
					{Reference: DeprecationReference{Schema: "olm.thing"}, Message: "?"},
				}
				return p
			},
			want: []problemKey{
				errorKey(CodeDeprecation, "a", "", "", `deprecation of olm.bundle "a.v1.0.0": message must be set`),
				errorKey(CodeDeprecation, "a", "", "", `deprecation reference has unknown schema "olm.thing"`),
				errorKey(CodeDeprecation, "a", "beta", "", `deprecated channel "beta" is not a channel of the package`),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := catalogOf(tt.pkg(), pkgWith("other", "stable", channel("other", "stable", entry("other.v1.0.0"))))
			got := keysOf(c.Validate())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Origin: Origin{File: "catalog.json", Line: 12}, Package: "etcd", Channel: "alpha", Message: "no channel head found in graph"},
			`catalog.json:12: package "etcd", channel "alpha": no channel head found in graph`},
		{Problem{Origin: Origin{File: "bundle/manifests/csv.yaml"}, Package: "etcd", Bundle: "etcd.v1", Message: "m"},
			`bundle/manifests/csv.yaml: package "etcd", bundle "etcd.v1": m`},
		{Problem{Message: "m"}, "m"},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestProblemsFilters(t *testing.T) {
	ps := Problems{
		{Severity: SeverityError, Package: "a", Channel: "stable"},
		{Severity: SeverityError, Package: "a"},
		{Severity: SeverityWarning, Package: "a", Bundle: "a.v1"},
		{Severity: SeverityInfo, Package: "a", Channel: "beta"},
		{Severity: SeverityError, Package: "b"},
	}
	if got := len(ps.ForPackage("a")); got != 4 {
		t.Errorf("ForPackage(a) = %d problems, want 4", got)
	}
	if got := len(ps.ForChannel("a", "stable")); got != 2 {
		t.Errorf("ForChannel(a, stable) = %d problems, want 2 (the channel's and the package's)", got)
	}
	if got := len(ps.Errors()); got != 3 {
		t.Errorf("Errors() = %d, want 3", got)
	}
	if got := len(ps.Warnings()); got != 1 {
		t.Errorf("Warnings() = %d, want 1", got)
	}
	if !ps.HasErrors() || ps[2:4].HasErrors() {
		t.Error("HasErrors is wrong")
	}
}
