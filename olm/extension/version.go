package extension

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/olmsync/olmsync/olm/catalog"
)

// versionRelease is a bundle's version and release as OLM v1 orders registry+v1 bundles:
// build metadata that reads as a release ("1.2.0+3") is the release, and the version is
// compared without it.
type versionRelease struct {
	version semver.Version
	release []semver.PRVersion
}

// compare orders by version, then by release: no release sorts below any release, and
// releases compare identifier by identifier as pre-release identifiers do.
func (a versionRelease) compare(b versionRelease) int {
	if c := a.version.Compare(b.version); c != 0 {
		return c
	}
	switch {
	case len(a.release) == 0 && len(b.release) > 0:
		return -1
	case len(b.release) == 0 && len(a.release) > 0:
		return 1
	}
	return semver.Version{Pre: a.release}.Compare(semver.Version{Pre: b.release})
}

// legacyVersionRelease parses a registry+v1 version, its build metadata taken as the
// release when every identifier of it is a valid release identifier.
func legacyVersionRelease(s string) (versionRelease, error) {
	v, err := semver.Parse(s)
	if err != nil {
		return versionRelease{}, err
	}
	vr := versionRelease{version: v}
	if rel, ok := parseRelease(strings.Join(v.Build, ".")); ok && len(rel) > 0 {
		vr.release = rel
		vr.version.Build = nil
	}
	return vr, nil
}

func parseRelease(s string) ([]semver.PRVersion, bool) {
	if s == "" {
		return nil, true
	}
	var out []semver.PRVersion
	for seg := range strings.SplitSeq(s, ".") {
		pr, err := semver.NewPRVersion(seg)
		if err != nil {
			return nil, false
		}
		out = append(out, pr)
	}
	return out, true
}

// bundleVersion is the version of a bundle's olm.package property, as OLM v1 reads it.
func bundleVersion(b *catalog.Bundle) (versionRelease, error) {
	for _, p := range b.Properties {
		if p.Type != catalog.PropertyPackage {
			continue
		}
		var pkg struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(p.Value, &pkg); err != nil {
			return versionRelease{}, fmt.Errorf("error unmarshalling package property: %w", err)
		}
		return legacyVersionRelease(pkg.Version)
	}
	return versionRelease{}, fmt.Errorf("no package property found in bundle %q", b.Name)
}

// String writes the version as OLM v1 writes status.install.bundle.version (the release
// back in the build metadata).
func (a versionRelease) String() string {
	v := a.version
	if len(a.release) > 0 {
		v.Build = nil
		for _, r := range a.release {
			v.Build = append(v.Build, r.String())
		}
	}
	return v.String()
}
