package sources

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func TestSelectSemverTag(t *testing.T) {
	tags := []string{"v1.0.0", "1.0.1", "v1.1.0", "v1.2.0-rc.1", "v2.0.0", "v2.0.0-beta.1", "latest", "v3", "release-4.0.0"}
	tests := []struct {
		rng  string
		tags []string
		want string
	}{
		{">=1.0.0 <2.0.0", tags, "v1.1.0"},
		{">=1.0.0", tags, "v2.0.0"},
		{"<1.1.0", tags, "1.0.1"},
		{"1.x", tags, "v1.1.0"},
		{">=1.2.0-rc.0 <1.3.0", tags, "v1.2.0-rc.1"},      // a range naming a pre-release admits them
		{">=1.2.0-rc.0 <2.0.0", tags, "v2.0.0-beta.1"},    // ...all of them, not only that version's
		{">=2.0.0-alpha <3.0.0", tags, "v2.0.0"},          // ...and a release still beats its pre-release
		{">1.1.0 <2.0.0", tags, ""},                       // only v1.2.0-rc.1 is in range, and it is a pre-release
		{">=3.0.0", tags, ""},                             // "v3" is not a version
		{">=1.0.0", []string{"v1.0.0", "1.0.0"}, "1.0.0"}, // same version twice: sort order decides
		{">=1.0.0", []string{"1.0.0", "v1.0.0"}, "1.0.0"},
		{">=0.0.0", nil, ""},
		{"!=1.1.0 >=1.0.0 <2.0.0", tags, "1.0.1"},
		{"<1.0.0 || >=2.0.0", tags, "v2.0.0"},
	}
	for _, tc := range tests {
		got, err := selectSemverTag(tc.tags, tc.rng)
		if err != nil {
			t.Errorf("selectSemverTag(%q): %v", tc.rng, err)
			continue
		}
		if got != tc.want {
			t.Errorf("selectSemverTag(%v, %q) = %q, want %q", tc.tags, tc.rng, got, tc.want)
		}
	}
	if _, err := selectSemverTag(tags, ">=>1"); err == nil {
		t.Error("a malformed range did not fail")
	}
}

func TestRefValidate(t *testing.T) {
	hash := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		ref   Ref
		valid bool
	}{
		{Ref{}, true},
		{Ref{Branch: "main"}, true},
		{Ref{Branch: "feature/x"}, true},
		{Ref{Tag: "v1.0.0"}, true},
		{Ref{SemVer: ">=1.0.0 <2.0.0"}, true},
		{Ref{Commit: hash}, true},
		{Ref{Commit: hash, Branch: "main"}, true},
		{Ref{Branch: "a b"}, false},
		{Ref{Branch: "a:b"}, false},
		{Ref{Branch: "-x"}, false},
		{Ref{Branch: "x..y"}, false},
		{Ref{Tag: "v1*"}, false},
		{Ref{SemVer: "not a range"}, false},
		{Ref{Commit: "abc123"}, false},
		{Ref{Commit: "ABCDEF0123456789ABCDEF0123456789ABCDEF01"}, false},
		{Ref{Tag: "v1", SemVer: ">=1.0.0"}, false},
		{Ref{Tag: "v1", Commit: hash}, false},
		{Ref{Branch: "main", Tag: "v1"}, false},
		{Ref{Branch: "main", SemVer: ">=1.0.0"}, false},
	}
	for _, tc := range tests {
		err := tc.ref.Validate()
		if (err == nil) != tc.valid {
			t.Errorf("%s Validate() = %v, want valid %v", tc.ref, err, tc.valid)
		}
	}
}

func TestRefString(t *testing.T) {
	tests := map[string]Ref{
		"the default branch":            {},
		`branch "main"`:                 {Branch: "main"},
		`tag "v1"`:                      {Tag: "v1"},
		`semver range ">=1.0.0"`:        {SemVer: ">=1.0.0"},
		`commit "abc" on branch "main"`: {Commit: "abc", Branch: "main"},
	}
	for want, ref := range tests {
		if got := ref.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

func TestPickRemoteRef(t *testing.T) {
	h := func(c byte) plumbing.Hash {
		var b plumbing.Hash
		for i := range b {
			b[i] = c
		}
		return b
	}
	refs := []*plumbing.Reference{
		plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/trunk"),
		plumbing.NewHashReference("refs/heads/trunk", h(1)),
		plumbing.NewHashReference("refs/heads/main", h(2)),
		plumbing.NewHashReference("refs/tags/v1.0.0", h(3)),
		plumbing.NewHashReference("refs/tags/v1.5.0", h(4)),
	}
	tests := []struct {
		ref  Ref
		want plumbing.ReferenceName
	}{
		{Ref{}, "refs/heads/trunk"},
		{Ref{Branch: "main"}, "refs/heads/main"},
		{Ref{Tag: "v1.0.0"}, "refs/tags/v1.0.0"},
		{Ref{SemVer: "1.x"}, "refs/tags/v1.5.0"},
		{Ref{Branch: "v1.0.0"}, ""},
		{Ref{Tag: "main"}, ""},
	}
	for _, tc := range tests {
		got, err := pickRemoteRef(refs, tc.ref, "https://h/r")
		if tc.want == "" {
			if err == nil {
				t.Errorf("pickRemoteRef(%s) = %v, want an error", tc.ref, got)
			}
			continue
		}
		if err != nil || got.Name() != tc.want {
			t.Errorf("pickRemoteRef(%s) = %v, %v; want %s", tc.ref, got, err, tc.want)
		}
	}
	// A server that does not say where HEAD points.
	if _, err := pickRemoteRef(refs[1:], Ref{}, "https://h/r"); err == nil {
		t.Error("default branch without a symbolic HEAD did not fail")
	}
}

// FuzzSelectSemverTag: whatever the range and tags, the choice is one of the
// tags, and no tag in range is higher.
func FuzzSelectSemverTag(f *testing.F) {
	f.Add(">=1.0.0 <2.0.0", "v1.0.0,v1.5.0,v2.0.0")
	f.Add("1.x || >=3.0.0-rc.1", "v3.0.0-rc.2,1.9.9,latest")
	f.Fuzz(func(t *testing.T, rng, tagList string) {
		tags := splitComma(tagList)
		got, err := selectSemverTag(tags, rng)
		if err != nil || got == "" {
			return
		}
		found := false
		for _, tag := range tags {
			found = found || tag == got
		}
		if !found {
			t.Fatalf("selected %q is not among %v", got, tags)
		}
		gotVer, _ := tagVersion(got)
		again, _ := selectSemverTag([]string{got}, rng)
		if again != got {
			t.Fatalf("selected %q is not in range %q on its own", got, rng)
		}
		for _, tag := range tags {
			if v, ok := tagVersion(tag); ok && v.GT(gotVer) {
				if alone, _ := selectSemverTag([]string{tag}, rng); alone == tag {
					t.Fatalf("%q is in range and higher than the selected %q", tag, got)
				}
			}
		}
	})
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
