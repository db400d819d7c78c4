package catalog

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// Report is the outcome of validating a catalog, as `olmsync catalog validate` prints it.
type Report struct {
	Source   Source `json:"source"`
	Packages int    `json:"packages"`
	Channels int    `json:"channels"`
	Bundles  int    `json:"bundles"`
	// Valid is true when no problem is an error.
	Valid bool `json:"valid"`
	// DefectivePackages are the packages with at least one error, sorted; every other
	// package is usable.
	DefectivePackages []string `json:"defectivePackages,omitempty"`
	Errors            int      `json:"errors"`
	Warnings          int      `json:"warnings"`
	Infos             int      `json:"infos"`
	Problems          Problems `json:"problems"`
}

// NewReport validates the catalog and sums up the result.
func NewReport(c *Catalog) Report {
	r := Report{Source: c.Source, Packages: len(c.Packages), Problems: c.Validate()}
	for _, p := range c.Packages {
		r.Channels += len(p.Channels)
		r.Bundles += len(p.Bundles)
	}
	defective := map[string]bool{}
	for _, p := range r.Problems {
		switch p.Severity {
		case SeverityError:
			r.Errors++
			if p.Package != "" {
				defective[p.Package] = true
			}
		case SeverityWarning:
			r.Warnings++
		default:
			r.Infos++
		}
	}
	for name := range defective {
		r.DefectivePackages = append(r.DefectivePackages, name)
	}
	slices.Sort(r.DefectivePackages)
	r.Valid = r.Errors == 0
	if r.Problems == nil {
		r.Problems = Problems{}
	}
	return r
}

// Report output formats.
const (
	ReportText = "text"
	ReportJSON = "json"
)

// writeJSON writes v as indented JSON, with <, > and & as they are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteReport writes the report as text (errors and warnings, and infos when verbose) or as
// JSON (everything).
func WriteReport(w io.Writer, r Report, format string, verbose bool) error {
	switch format {
	case ReportJSON:
		return writeJSON(w, r)
	case ReportText, "":
	default:
		return fmt.Errorf("unknown report format %q: use text or json", format)
	}
	ew := &errWriter{w: w}
	ew.printf("%s (%s", r.Source.Ref, r.Source.Format)
	if r.Source.Digest != "" {
		ew.printf(" %s", r.Source.Digest)
		if r.Source.Cached {
			ew.printf(", from cache")
		}
	}
	ew.printf("): %d packages, %d channels, %d bundles\n", r.Packages, r.Channels, r.Bundles)
	for _, p := range r.Problems {
		if p.Severity == SeverityInfo && !verbose {
			continue
		}
		ew.printf("%s: %s\n", p.Severity, p.Error())
	}
	if r.Valid {
		ew.printf("valid: %d warnings", r.Warnings)
	} else {
		ew.printf("invalid: %d errors in %d of %d packages (%d packages have none), %d warnings",
			r.Errors, len(r.DefectivePackages), r.Packages, r.Packages-len(r.DefectivePackages), r.Warnings)
	}
	if r.Infos > 0 && !verbose {
		ew.printf(", %d notes (-v shows them)", r.Infos)
	}
	ew.printf("\n")
	return ew.err
}
