package catalog

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/olmsync/olmsync/olm/semverrange"
)

// Validate returns every problem of the catalog: those found while reading (c.Problems)
// and those of the model, checked with the seeds' rules and operator-registry's: every
// package has a channel and a default channel that exists; every channel has entries, each
// once, each with its bundle; every bundle is in a channel, has exactly one olm.package
// property naming its package with a strict semver version, has an image or objects, and
// no two bundles share a name or a version; every skipRange parses; and every channel has
// exactly one head, no replaces cycle and no stranded entries. Each problem names its
// package, channel and bundle, so one defective package never hides the others. The
// result is sorted.
func (c *Catalog) Validate() Problems {
	v := &problems{list: slices.Clone(c.Problems)}
	for _, p := range c.Packages {
		validatePackage(v, p)
	}
	v.list.Sort()
	return v.list
}

func validatePackage(v *problems, p *Package) {
	switch {
	case p.Name == "":
		v.add(SeverityError, CodeInvalidPackage, p.Origin, "", "", "", "config contains package with no name")
	case len(validation.IsDNS1123Label(p.Name)) > 0:
		v.add(SeverityError, CodeInvalidPackage, p.Origin, p.Name, "", "", "invalid package name %q: %v", p.Name, validation.IsDNS1123Label(p.Name))
	}
	validateChannelSet(v, p)
	validateBundles(v, p)
	for _, ch := range p.Channels {
		validateChannel(v, p, ch)
	}
	validateDeprecations(v, p)
}

func validateChannelSet(v *problems, p *Package) {
	if len(p.Channels) == 0 {
		v.add(SeverityError, CodeNoChannels, p.Origin, p.Name, "", "", "package must contain at least one channel")
	}
	switch {
	case p.DefaultChannel == "":
		v.add(SeverityError, CodeNoDefaultChannel, p.Origin, p.Name, "", "", "default channel must be set")
	case p.Channel(p.DefaultChannel) == nil:
		// operator-registry's ConvertToModel makes the named default channel an empty
		// channel of the package (alpha/declcfg/declcfg_to_model.go:185-193), so what its
		// validation says is that channel's error (alpha/model/model.go:237), never its
		// "default channel %q not found in channels list".
		v.add(SeverityError, CodeDefaultChannelNotFound, p.Origin, p.Name, p.DefaultChannel, "", "channel must contain at least one bundle")
	}
	seen := map[string]*Channel{}
	for _, ch := range p.Channels {
		if first, dup := seen[ch.Name]; dup {
			v.add(SeverityError, CodeDuplicateChannel, ch.Origin, p.Name, ch.Name, "", "duplicate channel (also declared at %s)", first.Origin)
			continue
		}
		seen[ch.Name] = ch
	}
}

func validateBundles(v *problems, p *Package) {
	inChannel := map[string]bool{}
	for _, ch := range p.Channels {
		for _, e := range ch.Entries {
			inChannel[e.Name] = true
		}
	}
	seen := map[string]*Bundle{}
	byVersion := map[string][]string{}
	var versions []string
	for _, b := range p.Bundles {
		if first, dup := seen[b.Name]; dup {
			v.add(SeverityError, CodeDuplicateBundle, b.Origin, p.Name, "", b.Name, "duplicate bundle (also at %s)", first.Origin)
		} else {
			seen[b.Name] = b
		}
		if !inChannel[b.Name] {
			v.add(SeverityError, CodeBundleNotInChannel, b.Origin, p.Name, "", b.Name, "not found in any channel entries")
		}
		if version, ok := validateBundle(v, p, b); ok {
			if _, known := byVersion[version]; !known {
				versions = append(versions, version)
			}
			byVersion[version] = append(byVersion[version], b.Name)
		}
	}
	var dups []string
	for _, version := range versions {
		if names := byVersion[version]; len(names) > 1 {
			slices.Sort(names)
			dups = append(dups, fmt.Sprintf("{%s: [%s]}", version, strings.Join(names, ", ")))
		}
	}
	if len(dups) > 0 {
		v.add(SeverityError, CodeDuplicateVersion, p.Origin, p.Name, "", "", "duplicate versions found in bundles: [%s]", strings.Join(dups, " "))
	}
}

// validateBundle checks one bundle's properties and image. It returns the bundle's
// version when the version parses.
func validateBundle(v *problems, p *Package, b *Bundle) (string, bool) {
	props, err := b.Props()
	if err != nil {
		v.add(SeverityError, CodeBadProperty, b.Origin, p.Name, "", b.Name, "parse properties: %v", err)
	}
	if b.Image == "" && len(b.Objects) == 0 && b.CSV == nil {
		v.add(SeverityError, CodeNoImage, b.Origin, p.Name, "", b.Name, "bundle image must be set")
	}
	if props == nil {
		return "", false
	}
	if n := len(props.Packages); n != 1 {
		v.add(SeverityError, CodePackageProperty, b.Origin, p.Name, "", b.Name, "must have exactly 1 %q property, found %d", PropertyPackage, n)
		return "", false
	}
	pp := props.Packages[0]
	if pp.PackageName != p.Name {
		v.add(SeverityError, CodePackageProperty, b.Origin, p.Name, "", b.Name, "package %q does not match %q property %q", p.Name, PropertyPackage, pp.PackageName)
	}
	version, err := ParseVersion(pp.Version)
	if err != nil {
		v.add(SeverityError, CodeBadVersion, b.Origin, p.Name, "", b.Name, "error parsing bundle %q version %q: %v", b.Name, pp.Version, err)
		return "", false
	}
	return version.String(), true
}

func validateChannel(v *problems, p *Package, ch *Channel) {
	if len(ch.Entries) == 0 {
		v.add(SeverityError, CodeEmptyChannel, ch.Origin, p.Name, ch.Name, "", "channel must contain at least one bundle")
		return
	}
	validateEntries(v, p, ch)
	validateGraph(v, p, ch)
}

func validateEntries(v *problems, p *Package, ch *Channel) {
	seen := map[string]bool{}
	var missing []string
	for _, e := range ch.Entries {
		if seen[e.Name] {
			v.add(SeverityError, CodeDuplicateEntry, e.Origin, p.Name, ch.Name, e.Name, "duplicate entry %q", e.Name)
		} else if p.Bundle(e.Name) == nil {
			missing = append(missing, e.Name)
		}
		seen[e.Name] = true
		for i, s := range e.Skips {
			if s == "" {
				v.add(SeverityError, CodeEmptySkip, e.Origin, p.Name, ch.Name, e.Name, "skip[%d] is empty", i)
			}
		}
		if e.SkipRange == "" {
			continue
		}
		if _, err := semverrange.Parse(e.SkipRange); err != nil {
			v.add(SeverityError, CodeBadSkipRange, e.Origin, p.Name, ch.Name, e.Name, "invalid skipRange %q: %v", e.SkipRange, err)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		v.add(SeverityError, CodeMissingBundle, ch.Origin, p.Name, ch.Name, "", "no olm.bundle blobs found in package %q for olm.channel entries [%s]", p.Name, strings.Join(missing, " "))
	}
}

// validateGraph applies operator-registry's graph rules to one channel and notes the
// edges OLM tolerates but a reader of the graph should know about.
func validateGraph(v *problems, p *Package, ch *Channel) {
	g := newChannelGraph(ch)
	// operator-registry reports one of these per channel, in this order of precedence: the
	// head first, then the walk from it.
	heads := g.heads()
	switch len(heads) {
	case 0:
		// operator-registry's words; a channel without a head is a cycle of replaces,
		// which they leave the reader to find: olmsync names it beside them.
		msg := "no channel head found in graph"
		if len(g.entries) > 0 {
			if cycle, _ := g.replacesChain(g.entries[0].name); cycle != nil {
				msg += "; its replaces form a cycle: " + strings.Join(cycle, " -> ")
			}
		}
		v.add(SeverityError, CodeNoHead, ch.Origin, p.Name, ch.Name, "", "%s", msg)
	case 1:
		cycle, stranded := g.replacesChain(heads[0])
		switch {
		case cycle != nil:
			v.add(SeverityError, CodeCycle, ch.Origin, p.Name, ch.Name, "", "detected cycle in replaces chain of upgrade graph: %s", strings.Join(cycle, " -> "))
		case len(stranded) > 0:
			v.add(SeverityError, CodeStranded, ch.Origin, p.Name, ch.Name, "", "channel contains one or more stranded bundles: %s", strings.Join(stranded, ", "))
		}
	default:
		v.add(SeverityError, CodeMultipleHeads, ch.Origin, p.Name, ch.Name, "", "multiple channel heads found in graph: %s", strings.Join(heads, ", "))
	}
	noteEdgesLeavingChannel(v, p, ch, len(heads) > 1)
}

// noteEdgesLeavingChannel notes the replaces and skips that name something outside the
// channel. In a channel of several heads, a replaces of a bundle the package does not have
// at all is an error of its own, the first thing to fix: the entry's chain ends there
// instead of joining the channel's (a typo, a version removed), which is what splits the
// channel; opm only says "multiple channel heads".
func noteEdgesLeavingChannel(v *problems, p *Package, ch *Channel, split bool) {
	for _, e := range ch.Entries {
		switch {
		case e.Replaces == "" || ch.Entry(e.Replaces) != nil:
		case split && p.Bundle(e.Replaces) == nil && whereIs(p, e.Replaces) == inNoBundle:
			v.add(SeverityError, CodeReplacesUnknown, e.Origin, p.Name, ch.Name, e.Name, "replaces %q, which is %s, so its chain does not join the channel's: the channel has more than one head", e.Replaces, inNoBundle)
		default:
			v.add(SeverityInfo, CodeReplacesOutside, e.Origin, p.Name, ch.Name, e.Name, "replaces %q, which is not an entry of the channel (%s)", e.Replaces, whereIs(p, e.Replaces))
		}
		for _, s := range e.Skips {
			if s != "" && p.Bundle(s) == nil {
				v.add(SeverityInfo, CodeSkipsMissing, e.Origin, p.Name, ch.Name, e.Name, "skips %q, which is not a bundle of the package", s)
			}
		}
	}
}

const inNoBundle = "in no bundle of the package"

// whereIs says where a name outside a channel lives: in other channels of the package, or nowhere.
func whereIs(p *Package, name string) string {
	var in []string
	for _, ch := range p.Channels {
		if ch.Entry(name) != nil {
			in = append(in, ch.Name)
		}
	}
	if len(in) == 0 {
		return inNoBundle
	}
	return "in channel " + strings.Join(in, ", ")
}

func validateDeprecations(v *problems, p *Package) {
	for _, d := range p.Deprecations {
		if d.Message == "" {
			v.add(SeverityError, CodeDeprecation, d.Origin, p.Name, "", "", "deprecation of %s %q: message must be set", d.Reference.Schema, d.Reference.Name)
		}
		switch d.Reference.Schema {
		case SchemaPackage:
			if d.Reference.Name != "" {
				v.add(SeverityError, CodeDeprecation, d.Origin, p.Name, "", "", "deprecation of the package must not name %q", d.Reference.Name)
			}
		case SchemaChannel:
			if p.Channel(d.Reference.Name) == nil {
				v.add(SeverityError, CodeDeprecation, d.Origin, p.Name, d.Reference.Name, "", "deprecated channel %q is not a channel of the package", d.Reference.Name)
			}
		case SchemaBundle:
			if p.Bundle(d.Reference.Name) == nil {
				v.add(SeverityError, CodeDeprecation, d.Origin, p.Name, "", d.Reference.Name, "deprecated bundle %q is not a bundle of the package", d.Reference.Name)
			}
		default:
			v.add(SeverityError, CodeDeprecation, d.Origin, p.Name, "", "", "deprecation reference has unknown schema %q", d.Reference.Schema)
		}
	}
}
