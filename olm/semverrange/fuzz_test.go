package semverrange

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/olmsync/olmsync/internal/shareddata"
)

// maxSeeds bounds the seeds taken from the shared data: every seed runs before fuzzing
// starts.
const maxSeeds = 200

// FuzzParse: Parse never panics; it accepts exactly the ranges blang/semver (OLM's
// parser) accepts without dropping a token, and then means what blang means; and a range
// it refuses for a dropped token is one blang would shorten. Seeded with every skipRange
// and dependency range of the shared community catalog.
func FuzzParse(f *testing.F) {
	for _, r := range []string{">=4.1.0 <4.1.2", "<2.0.0 || >=3.0.0", "1.x", ">1.2.x", "!=1.x.x", "<v1.4.0", "~1.2.3", "1.x.x.x", "> 1.0.0-rc.1+build", "||", "",
		">=1.0.0 <", "1.0.0 - 2.0.0", ">= 1.0.0 <  2.0.0 || 3"} {
		f.Add(r, "1.2.3-rc.1")
	}
	for _, r := range sharedRanges(f) {
		f.Add(r, "1.2.3")
	}
	f.Fuzz(func(t *testing.T, rng, version string) {
		r, err := Parse(rng)
		_, _, dropped := droppedToken(rng)
		blang, blangErr := blangParseRange(rng)
		switch {
		case err == nil && dropped:
			t.Fatalf("Parse accepted %q, whose token blang drops", rng)
		case err == nil && blangErr != nil:
			t.Fatalf("Parse accepted %q, which blang refuses: %v", rng, blangErr)
		case err != nil && !dropped && blangErr == nil:
			t.Fatalf("Parse refused %q (%v), which blang reads whole", rng, err)
		}
		if err != nil {
			return
		}
		if v, err := semver.Parse(version); err == nil && r(v) != blang(v) {
			t.Fatalf("%q contains %s: Parse says %t, blang %t", rng, v, r(v), blang(v))
		}
	})
}

// blangParseRange is blang/semver's ParseRange with its panics turned into errors.
func blangParseRange(s string) (r semver.Range, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	return semver.ParseRange(s)
}

// rangeField finds the skipRanges and dependency versionRanges of a file-based catalog
// without decoding it: the seeds come without linking the catalog package.
var rangeField = regexp.MustCompile(`"(?:skipRange|versionRange)":\s*"((?:[^"\\]|\\.)*)"`)

// sharedRanges are the skipRanges and dependency ranges of the shared community catalog.
func sharedRanges(f *testing.F) []string {
	files := shareddata.Files(f, "data/catalogs/community-operators", func(p string) bool { return strings.HasSuffix(p, "catalog.json") }, 1)
	if len(files) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range rangeField.FindAllSubmatch(files[0].Data, -1) {
		r := string(m[1])
		if r != "" && !seen[r] && len(out) < maxSeeds {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
