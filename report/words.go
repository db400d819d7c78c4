package report

import (
	"fmt"
	"strings"
)

// The wording shared by the formats for people (text, Markdown, GitHub's summary line),
// so that all three say the same thing the same way.

// plural is "1 error", "2 errors".
func plural(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, noun(n, one, many))
}

// noun is one or many by n, without the number.
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// countNew counts the violations that are not waived, of a severity, that are new.
func countNew(r *Report, s Severity) int {
	n := 0
	for _, v := range r.Violations {
		if !v.Waived && v.Severity == s && v.Status == StatusNew {
			n++
		}
	}
	return n
}

// summaryParts is the summary as phrases: "3 errors (1 new)", "1 warning", "2 waived"…
// Errors and warnings are always named; the rest only when there are some.
func summaryParts(r *Report) []string {
	s := r.Summary
	withNew := func(phrase string, sev Severity) string {
		if r.Base == nil {
			return phrase
		}
		return fmt.Sprintf("%s (%d new)", phrase, countNew(r, sev))
	}
	parts := []string{
		withNew(plural(s.Errors, "error", "errors"), SeverityError),
		withNew(plural(s.Warnings, "warning", "warnings"), SeverityWarning),
	}
	if s.Waived > 0 {
		parts = append(parts, fmt.Sprintf("%d waived", s.Waived))
	}
	if s.Problems > 0 {
		phrase := plural(s.Problems, "problem", "problems")
		if pre := countPreExistingProblems(r); pre > 0 {
			phrase += fmt.Sprintf(" (%d pre-existing)", pre)
		}
		parts = append(parts, phrase)
	}
	if s.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("%d unknown (apps that no longer render)", s.Unknown))
	}
	if s.UncheckedChanges > 0 {
		parts = append(parts, plural(s.UncheckedChanges, "unchecked change", "unchecked changes"))
	}
	if n := s.RenderWarnings - s.UncheckedChanges; n > 0 {
		parts = append(parts, plural(n, "render warning", "render warnings"))
	}
	if r.Base != nil {
		parts = append(parts, plural(s.Changes, "OLM change", "OLM changes"))
	}
	if s.NotChecked > 0 {
		parts = append(parts, fmt.Sprintf("%d not checked", s.NotChecked))
	}
	return parts
}

// countPreExistingProblems counts the checked revision's problems the base has too.
func countPreExistingProblems(r *Report) int {
	n := 0
	for _, p := range r.Problems {
		if !p.Base && p.Status == StatusPreExisting {
			n++
		}
	}
	return n
}

// verdict says what the result means, and why when it is not a pass.
func verdict(r *Report) string {
	switch r.Summary.Result {
	case ResultIncomplete:
		if r.Summary.FailOn == FailOnNew && r.Base != nil {
			return "incomplete: some new input could not be read or rendered"
		}
		return "incomplete: some input could not be read or rendered"
	case ResultFailed:
		if r.Summary.FailOn == FailOnNew && r.Base != nil {
			return "failed: " + plural(countNew(r, SeverityError), "new error", "new errors")
		}
		return "failed: " + plural(r.Summary.Errors, "error", "errors")
	default:
		if r.Summary.FailOn == FailOnNew && r.Base != nil && (r.Summary.Errors > 0 || countPreExistingProblems(r) > 0) {
			return "passed: nothing new"
		}
		return "passed"
	}
}

// checkedWhat is the first line of a report for people.
// LibraryHint says how to tell olmsync where library roots are deployed (render's
// LibraryHint, which the report cannot import).
const LibraryHint = "if another repository deploys them, list them in olmsync.yaml (apps:, with their clusters), or set discovery.uncoveredRoots: apps"

// libraryLine is the one line every format gives library roots: how many, what was done
// with them, and how to say where they are deployed. "" without any.
func libraryLine(r *Report) string {
	n := r.Summary.LibraryRoots
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s: no Argo CD Application or ApplicationSet and no Flux Kustomization of this repository deploys %s, so %s checked on %s own, without the placement rules; %s",
		plural(n, "library root", "library roots"), pick(n, "it", "them"), pick(n, "it was", "they were"), pick(n, "its", "their"), LibraryHint)
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func checkedWhat(r *Report) string {
	var b strings.Builder
	b.WriteString("olmsync check of ")
	b.WriteString(r.Revision.String())
	if r.Base != nil {
		b.WriteString(" against base ")
		b.WriteString(r.Base.String())
	}
	if r.Summary.Apps > 0 {
		b.WriteString(": ")
		b.WriteString(plural(r.Summary.Apps, "app", "apps"))
		if n := r.Summary.LibraryRoots; n > 0 {
			fmt.Fprintf(&b, " (%d of them library roots)", n)
		}
	}
	return b.String()
}

// waiverText describes a waiver: "waived: reviewed by ops (olmsync.yaml, expires 2027-01-31)".
func waiverText(w *Waiver) string {
	if w == nil {
		return "waived"
	}
	var where []string
	switch w.Source {
	case WaiverAnnotation:
		where = append(where, "annotation")
	case WaiverConfig:
		where = append(where, "olmsync.yaml")
	}
	if w.Expires != "" {
		where = append(where, "expires "+w.Expires)
	}
	s := "waived"
	if w.Reason != "" {
		s += ": " + w.Reason
	}
	if len(where) > 0 {
		s += " (" + strings.Join(where, ", ") + ")"
	}
	return s
}

// fieldName is a field's path for people: "channel" rather than "spec.channel".
func fieldName(path string) string {
	if rest, ok := strings.CutPrefix(path, "spec."); ok {
		return rest
	}
	return path
}

// fieldText describes one field change: "channel: stable → fast".
func fieldText(t ChangeType, f FieldChange) string {
	name := fieldName(f.Path)
	orUnset := func(s string) string {
		if s == "" {
			return "(unset)"
		}
		return s
	}
	switch {
	case f.Omitted:
		return name + ": changed (too large to show)"
	case t == ChangeAdded:
		return name + ": " + f.New
	case t == ChangeRemoved:
		return name + ": " + f.Old
	default:
		return name + ": " + orUnset(f.Old) + " → " + orUnset(f.New)
	}
}

// location is "file:line", "file", or "" when neither is known.
func location(file string, line int) string {
	if file == "" {
		return ""
	}
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

// groupKey is the heading a violation falls under when grouped.
func groupKey(r *Report, v Violation, by GroupBy) string {
	switch by {
	case GroupByApp:
		if v.App == "" {
			return "(no app)"
		}
		return "app " + v.App
	case GroupByRule:
		if rule, ok := r.rule(v.Rule); ok && rule.Title != rule.ID {
			return v.Rule + " " + rule.Title
		}
		return v.Rule
	default:
		if v.File == "" {
			return "(no file)"
		}
		return v.File
	}
}
