package catalog

import (
	"errors"
	"testing"
)

func TestParseSkipRangeNamesTheBundle(t *testing.T) {
	e := entry("percona-xtradb-cluster-operator.v1.12.0").skipRange("<v1.12.0")
	_, err := e.ParseSkipRange("percona-xtradb-cluster-operator")
	var srErr *SkipRangeError
	if !errors.As(err, &srErr) {
		t.Fatalf("ParseSkipRange error = %v, want a *SkipRangeError", err)
	}
	want := `package "percona-xtradb-cluster-operator", bundle "percona-xtradb-cluster-operator.v1.12.0": invalid skipRange "<v1.12.0": Could not parse Range "<v1.12.0": Could not parse comparator "<v" in "<v1.12.0"`
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
	if r, err := entry("a.v1").ParseSkipRange("a"); r != nil || err != nil {
		t.Errorf("entry without skipRange: got (%v, %v), want (nil, nil)", r != nil, err)
	}
}

// TestSkipRangeErrorNamesTheDanglingToken: a skipRange blang/semver would shorten is a
// *SkipRangeError naming the bundle, then the token.
func TestSkipRangeErrorNamesTheDanglingToken(t *testing.T) {
	want := `"<" is not a comparison: OLM's parser (blang/semver) would drop it without a word and read the range as ">=1.0.0"`
	var se *SkipRangeError
	_, err := ChannelEntry{Name: "a.v1.1.0", SkipRange: ">=1.0.0 <"}.ParseSkipRange("a")
	if !errors.As(err, &se) || err.Error() != `package "a", bundle "a.v1.1.0": invalid skipRange ">=1.0.0 <": `+want {
		t.Errorf("err = %v", err)
	}
}
