package semverrange

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// Parse parses a semver range as OLM does (blang/semver v4 ParseRange): space is
// AND, "||" is OR, operators = == ! != > >= < <=, wildcards 1.x; no ~, ^, commas or
// leading v. A pre-release compares by semver precedence, so "<1.0.0" contains
// "1.0.0-rc1". Unlike calling the library directly, Parse never panics on hostile
// input, and it refuses a range the library would shorten without a word: blang/semver
// drops every token of one character (a dangling "<" in ">=1.0.0 <", the "-" of
// "1.0.0 - 2.0.0"), so the range OLM acts on is not the one written (docs/olm.md).
func Parse(s string) (r semver.Range, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("could not parse range %q: %v", s, p)
		}
	}()
	if tok, rest, ok := droppedToken(s); ok {
		return nil, fmt.Errorf("%q is not a comparison: OLM's parser (blang/semver) would drop it without a word and read the range as %q", tok, rest)
	}
	return semver.ParseRange(s)
}

// droppedToken finds the first token blang/semver's splitAndTrim drops: it splits at a
// space not following '>', '<' or '=' (so ">= 1.0.0" is one token) and keeps a token
// only when it is longer than one byte. rest is the range without it.
func droppedToken(s string) (tok, rest string, ok bool) {
	start := 0
	var last byte
	for i := 0; i <= len(s); i++ {
		atEnd := i == len(s)
		if !atEnd && (s[i] != ' ' || last == '>' || last == '<' || last == '=') {
			if s[i] != ' ' {
				last = s[i]
			}
			continue
		}
		if i-start == 1 {
			rest = strings.Join(strings.Fields(s[:start]+s[i:]), " ")
			return s[start:i], rest, true
		}
		start = i + 1
	}
	return "", "", false
}
