package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity says how much a problem matters.
type Severity int

const (
	// SeverityError is a defect OLM (or opm) refuses: the package, channel or bundle it
	// names cannot be trusted.
	SeverityError Severity = iota
	// SeverityWarning is something OLM accepts that is probably a mistake (a field the
	// CSV type does not know, a metadata file that contributes nothing).
	SeverityWarning
	// SeverityInfo is something OLM accepts on purpose but that is worth knowing when
	// reading a graph (a replaces edge leaving the channel at its tail, a skip naming a
	// bundle that does not exist).
	SeverityInfo
)

// String is "error", "warning" or "info".
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	default:
		return "info"
	}
}

// MarshalText writes the severity's name, so JSON reports read "error", not 0.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Code classifies a problem so that callers can branch on it.
type Code string

// The problem codes. Messages carry OLM's own wording where OLM has one.
const (
	CodeParse                  Code = "Parse"                  // a file or object that cannot be read
	CodeUnknownField           Code = "UnknownField"           // a manifest field the types do not know
	CodeInvalidPackage         Code = "InvalidPackage"         // package name empty or not a DNS-1123 label; package.yaml invalid
	CodeDuplicatePackage       Code = "DuplicatePackage"       // two olm.package objects with one name
	CodeUnknownPackage         Code = "UnknownPackage"         // a channel or bundle of a package that is not declared
	CodeNoChannels             Code = "NoChannels"             // a package without channels
	CodeNoDefaultChannel       Code = "NoDefaultChannel"       // no default channel
	CodeDefaultChannelNotFound Code = "DefaultChannelNotFound" // the default channel is not a channel of the package
	CodeDuplicateChannel       Code = "DuplicateChannel"       // a channel name given twice
	CodeEmptyChannel           Code = "EmptyChannel"           // a channel without entries
	CodeDuplicateEntry         Code = "DuplicateEntry"         // a bundle listed twice in a channel
	CodeMissingBundle          Code = "MissingBundle"          // a channel entry, or a channel head, without its bundle
	CodeBundleNotInChannel     Code = "BundleNotInChannel"     // a bundle no channel lists
	CodeDuplicateBundle        Code = "DuplicateBundle"        // a bundle name given twice in a package
	CodeDuplicateVersion       Code = "DuplicateVersion"       // two bundles of a package with one version
	CodeBadProperty            Code = "BadProperty"            // a property whose value cannot be read
	CodePackageProperty        Code = "PackageProperty"        // not exactly one olm.package property, or it names another package
	CodeBadVersion             Code = "BadVersion"             // a bundle version that is not strict semver
	CodeNoImage                Code = "NoImage"                // a bundle with neither image nor objects
	CodeBadSkipRange           Code = "BadSkipRange"           // an olm.skipRange blang/semver cannot parse
	CodeEmptySkip              Code = "EmptySkip"              // an empty name in skips
	CodeNoHead                 Code = "NoHead"                 // a channel in which every entry is replaced or skipped
	CodeMultipleHeads          Code = "MultipleHeads"          // a channel with more than one head
	CodeCycle                  Code = "Cycle"                  // a replaces cycle
	CodeStranded               Code = "Stranded"               // entries the head's replaces chain never reaches
	CodeReplacesMissing        Code = "ReplacesMissing"        // a replaced CSV that is not in the package (package manifests, ConfigMaps)
	CodeReplacesUnknown        Code = "ReplacesUnknown"        // a replaces naming a bundle the package does not have, in a channel it splits
	CodeReplacesOutside        Code = "ReplacesOutside"        // info: a replaces edge that leaves the channel at its tail
	CodeSkipsMissing           Code = "SkipsMissing"           // info: a skip naming a bundle that is not in the channel
	CodeCSVCount               Code = "CSVCount"               // a bundle or version folder without exactly one CSV
	CodeOwnedCRDMissing        Code = "OwnedCRDMissing"        // a CSV owns a CRD the bundle does not carry
	CodeDuplicateCRD           Code = "DuplicateCRD"           // one CRD twice in a ConfigMap
	CodeBundleMetadata         Code = "BundleMetadata"         // annotations, dependencies or properties of a bundle unusable
	CodeDeprecation            Code = "Deprecation"            // an olm.deprecations entry that names nothing
)

// Problem is one defect of a catalog, named by where it was read and what it concerns.
type Problem struct {
	Severity Severity `json:"severity"`
	Code     Code     `json:"code"`
	Origin   Origin   `json:"origin,omitzero"`
	Package  string   `json:"package,omitempty"`
	Channel  string   `json:"channel,omitempty"`
	Bundle   string   `json:"bundle,omitempty"`
	Message  string   `json:"message"`
}

// Error reads like `catalog.json:12: package "etcd", channel "alpha": multiple channel
// heads found in graph: a, b`.
func (p Problem) Error() string {
	var b strings.Builder
	if o := p.Origin.String(); o != "" {
		b.WriteString(o)
		b.WriteString(": ")
	}
	var subject []string
	if p.Package != "" {
		subject = append(subject, fmt.Sprintf("package %q", p.Package))
	}
	if p.Channel != "" {
		subject = append(subject, fmt.Sprintf("channel %q", p.Channel))
	}
	if p.Bundle != "" {
		subject = append(subject, fmt.Sprintf("bundle %q", p.Bundle))
	}
	if len(subject) > 0 {
		b.WriteString(strings.Join(subject, ", "))
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is a list of problems.
type Problems []Problem

// Errors returns the problems of severity error.
func (ps Problems) Errors() Problems { return ps.bySeverity(SeverityError) }

// Warnings returns the problems of severity warning.
func (ps Problems) Warnings() Problems { return ps.bySeverity(SeverityWarning) }

func (ps Problems) bySeverity(s Severity) Problems {
	var out Problems
	for _, p := range ps {
		if p.Severity == s {
			out = append(out, p)
		}
	}
	return out
}

// ForPackage returns the problems that concern the package (any of its channels and bundles).
func (ps Problems) ForPackage(pkg string) Problems {
	var out Problems
	for _, p := range ps {
		if p.Package == pkg {
			out = append(out, p)
		}
	}
	return out
}

// ForChannel returns the problems that concern the channel itself or the package as a
// whole: what stands in the way of using that channel. Problems of other channels and of
// single bundles are left out.
func (ps Problems) ForChannel(pkg, channel string) Problems {
	var out Problems
	for _, p := range ps {
		if p.Package == pkg && (p.Channel == channel || p.Channel == "" && p.Bundle == "") {
			out = append(out, p)
		}
	}
	return out
}

// HasErrors reports whether any problem is an error.
func (ps Problems) HasErrors() bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Severity == SeverityError })
}

// Sort orders problems by package, channel, bundle, file, line, code and message, so that
// reports are stable from run to run; within a channel, a problem that causes the
// channel's others (causes) comes first.
func (ps Problems) Sort() {
	slices.SortFunc(ps, func(a, b Problem) int {
		return cmp.Or(
			cmp.Compare(a.Package, b.Package),
			cmp.Compare(a.Channel, b.Channel),
			cmp.Compare(causeRank(a), causeRank(b)),
			cmp.Compare(a.Bundle, b.Bundle),
			cmp.Compare(a.Origin.File, b.Origin.File),
			cmp.Compare(a.Origin.Line, b.Origin.Line),
			cmp.Compare(a.Code, b.Code),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// causes are the codes of problems that explain the others of their channel: a reader
// must see them first ("a replaces an unknown bundle", then OLM's "multiple channel
// heads").
var causes = map[Code]bool{CodeReplacesUnknown: true}

func causeRank(p Problem) int {
	if causes[p.Code] {
		return 0
	}
	return 1
}

// problems collects problems while reading or validating.
type problems struct{ list Problems }

func (ps *problems) add(sev Severity, code Code, o Origin, pkg, ch, bundle, format string, args ...any) {
	ps.list = append(ps.list, Problem{
		Severity: sev, Code: code, Origin: o,
		Package: pkg, Channel: ch, Bundle: bundle,
		Message: fmt.Sprintf(format, args...),
	})
}
