package catalog

import (
	"fmt"

	"github.com/blang/semver/v4"

	"github.com/olmsync/olmsync/olm/semverrange"
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

// ParseSkipRange parses the entry's skipRange. It returns nil and no error when the entry has
// none, and a *SkipRangeError naming the package and bundle when it does not parse.
func (e ChannelEntry) ParseSkipRange(pkg string) (semver.Range, error) {
	if e.SkipRange == "" {
		return nil, nil
	}
	r, err := semverrange.Parse(e.SkipRange)
	if err != nil {
		return nil, &SkipRangeError{Package: pkg, Bundle: e.Name, Range: e.SkipRange, Err: err}
	}
	return r, nil
}

// ParseVersion parses a bundle version as FBC requires: strict semver, no leading "v".
func ParseVersion(s string) (semver.Version, error) {
	return semver.Parse(s)
}
