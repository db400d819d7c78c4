package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzParseWaiveAnnotation: any annotation value is read without panicking; every line is
// either a list of waived rules with a reason or reported as malformed, never both and
// never dropped.
func FuzzParseWaiveAnnotation(f *testing.F) {
	for _, seed := range []string{
		"OP013: reviewed", "OP005, OP007: a\nOP012: b", "OP013 reviewed", ":", ",:x", "OP1:\r\n\n x : y ", "a,b,c: d: e",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		waived, malformed := ParseWaiveAnnotation(value)
		for _, w := range waived {
			if w.Rule == "" || strings.ContainsAny(w.Rule, " \t,:\n") || w.Reason == "" || w.Reason != strings.TrimSpace(w.Reason) {
				t.Fatalf("bad waiver %+v from %q", w, value)
			}
		}
		lines := 0
		for line := range strings.Lines(value) {
			if strings.TrimSpace(line) != "" {
				lines++
			}
		}
		if len(malformed) > lines || (lines > 0 && len(waived) == 0 && len(malformed) != lines) {
			t.Fatalf("%q: %d non-blank lines, %d waivers, %d malformed", value, lines, len(waived), len(malformed))
		}
	})
}

// FuzzUserPolicy: any file in a user's rule folder either loads or is a *PolicyError
// naming that file; it never panics and never slips past as something else.
func FuzzUserPolicy(f *testing.F) {
	for _, seed := range []string{
		"package a\n\ndeny contains \"x\" if true\n",
		"package a\n\ndeny[msg] { msg := 1 }\n",
		"# METADATA\n# custom:\n#   id: OP001\npackage a\ndeny contains 1 if true\n",
		"package olmsync.lib\n",
		"package a\nimport data.olmsync.lib\nwarn contains x if { some x in lib.olm.Subscription }\n",
		"# METADATA\n# title: [\npackage a\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		fsys := fstest.MapFS{"fuzz/r.rego": {Data: []byte(src)}}
		_, err := New(context.Background(), Options{Policies: []PolicySource{{Root: "p", FS: fsys}}})
		if err == nil {
			return
		}
		var pe *PolicyError
		if !errors.As(err, &pe) {
			t.Fatalf("%q: error %v is not a *PolicyError", src, err)
		}
		if !strings.Contains(err.Error(), "p/fuzz/r.rego") {
			t.Fatalf("%q: error %q does not name the file", src, err)
		}
	})
}
