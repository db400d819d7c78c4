package semverrange

import (
	"testing"

	"github.com/blang/semver/v4"
)

func TestParse(t *testing.T) {
	tests := []struct {
		rng      string
		in, out  []string
		parseErr bool
	}{
		// seeds 004's skipRange example.
		{rng: ">=4.1.0 <4.1.2", in: []string{"4.1.0", "4.1.1"}, out: []string{"4.0.9", "4.1.2", "4.2.0"}},
		// Space is AND, || is OR.
		{rng: "<2.0.0 || >=3.0.0", in: []string{"1.9.9", "3.0.0"}, out: []string{"2.0.0", "2.5.0"}},
		{rng: ">1.0.0 <3.0.0 !2.0.3", in: []string{"2.0.2", "2.0.4"}, out: []string{"1.0.0", "2.0.3", "3.0.0"}},
		{rng: "=1.2.3", in: []string{"1.2.3"}, out: []string{"1.2.4"}},
		{rng: "==1.2.3", in: []string{"1.2.3"}, out: []string{"1.2.2"}},
		{rng: "1.2.3", in: []string{"1.2.3"}, out: []string{"1.2.4"}},
		{rng: "!=1.2.3", in: []string{"1.2.4"}, out: []string{"1.2.3"}},
		{rng: "<=1.2.3", in: []string{"1.2.3"}, out: []string{"1.2.4"}},
		{rng: "> 1.2.3", in: []string{"1.2.4"}, out: []string{"1.2.3"}},
		// Wildcards.
		{rng: "1.x", in: []string{"1.0.0", "1.9.9"}, out: []string{"2.0.0", "0.9.0"}},
		{rng: ">=1.2.x", in: []string{"1.2.0"}, out: []string{"1.1.9"}},
		{rng: "<=1.2.x", in: []string{"1.2.9"}, out: []string{"1.3.0"}},
		// Pre-releases compare by semver precedence: no npm-style exclusion (olm-behaviour 1.4).
		{rng: "<1.0.0", in: []string{"1.0.0-rc1", "0.9.0"}, out: []string{"1.0.0"}},
		{rng: ">=4.5.0 <4.6.0", in: []string{"4.5.1", "4.6.0-rc.1"}, out: []string{"4.5.0-0.nightly", "4.6.0"}},
		// Not supported: tilde, caret, commas, a leading v, empty.
		{rng: "~1.2.3", parseErr: true},
		{rng: "^1.2.3", parseErr: true},
		{rng: ">=1.0.0, <2.0.0", parseErr: true},
		{rng: "<v1.4.0", parseErr: true},
		{rng: ">=v1.0.0", parseErr: true},
		{rng: "", parseErr: true},
		{rng: "|| 1.0.0", parseErr: true},
		{rng: "1.0.0 ||", parseErr: true},
		{rng: "latest", parseErr: true},
		// A token of one character is dropped by blang/semver without a word, so the range
		// would mean something else than written: olmsync refuses it (docs/olm.md).
		{rng: ">=1.0.0 <", parseErr: true},
		{rng: ">=1.0.0 > || <2.0.0", parseErr: true},
		{rng: "1.0.0 - 2.0.0", parseErr: true},
		{rng: ">=1.0.0 1", parseErr: true},
		{rng: ">=1.0.0 <1.5.0 !", parseErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.rng, func(t *testing.T) {
			r, err := Parse(tt.rng)
			if tt.parseErr {
				if err == nil {
					t.Fatalf("Parse(%q) = nil error, want one", tt.rng)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.rng, err)
			}
			for _, v := range tt.in {
				if !r(semver.MustParse(v)) {
					t.Errorf("%q does not contain %s, want it to", tt.rng, v)
				}
			}
			for _, v := range tt.out {
				if r(semver.MustParse(v)) {
					t.Errorf("%q contains %s, want it not to", tt.rng, v)
				}
			}
		})
	}
}

// TestParseRangeNamesTheDanglingToken: the error of a range blang/semver would shorten
// silently says which token it drops and what the range would then mean.
func TestParseRangeNamesTheDanglingToken(t *testing.T) {
	_, err := Parse(">=1.0.0 <")
	want := `"<" is not a comparison: OLM's parser (blang/semver) would drop it without a word and read the range as ">=1.0.0"`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}
