package catalog

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// SkipRangeError is a skipRange that blang/semver, the parser OLM uses, cannot read. It
// names the bundle whose channel entry (or olm.skipRange annotation) carries it.
type SkipRangeError struct {
	Package string
	Bundle  string
	Range   string
	Err     error
}

// Error uses operator-registry's wording: `invalid skipRange "<r>": <parser error>`.
func (e *SkipRangeError) Error() string {
	msg := fmt.Sprintf("invalid skipRange %q: %v", e.Range, e.Err)
	if e.Bundle == "" {
		return msg
	}
	return fmt.Sprintf("package %q, bundle %q: %s", e.Package, e.Bundle, msg)
}

func (e *SkipRangeError) Unwrap() error { return e.Err }

// ParseRange parses a semver range as OLM does (blang/semver v4 ParseRange): space is
// AND, "||" is OR, operators = == ! != > >= < <=, wildcards 1.x; no ~, ^, commas or
// leading v. A pre-release compares by semver precedence, so "<1.0.0" contains
// "1.0.0-rc1". Unlike calling the library directly, ParseRange never panics on hostile
// input, and it refuses a range the library would shorten without a word: blang/semver
// drops every token of one character (a dangling "<" in ">=1.0.0 <", the "-" of
// "1.0.0 - 2.0.0"), so the range OLM acts on is not the one written (docs/olm.md).
func ParseRange(s string) (r semver.Range, err error) {
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

// ParseSkipRange parses the entry's skipRange. It returns nil and no error when the entry has
// none, and a *SkipRangeError naming the package and bundle when it does not parse.
func (e ChannelEntry) ParseSkipRange(pkg string) (semver.Range, error) {
	if e.SkipRange == "" {
		return nil, nil
	}
	r, err := ParseRange(e.SkipRange)
	if err != nil {
		return nil, &SkipRangeError{Package: pkg, Bundle: e.Name, Range: e.SkipRange, Err: err}
	}
	return r, nil
}

// ParseVersion parses a bundle version as FBC requires: strict semver, no leading "v".
func ParseVersion(s string) (semver.Version, error) {
	return semver.Parse(s)
}
