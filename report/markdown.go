package report

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MarkdownMarker is the first line of the Markdown format, an HTML comment GitHub does not
// show: a CI job can find its previous comment by it and update that one.
const MarkdownMarker = "<!-- olmsync-report -->"

// GitHub refuses a comment longer than 65,536 characters. The writer shortens its tables
// until the comment fits under maxComment, leaving room for what a CI job appends.
const (
	maxComment     = 60000
	maxTableRows   = 50
	maxCellMessage = 600
)

// mdWriter writes the Markdown format for a pull request comment.
type mdWriter struct {
	b          strings.Builder
	sourceURL  string
	pathPrefix string
	// rows bounds each table; the rest is counted in a last row.
	rows int
}

// mdSections are the parts of the Markdown format, in order; the OLM preview slots in
// here.
var mdSections = []func(*mdWriter, *Report){
	(*mdWriter).heading,
	(*mdWriter).mainViolations,
	(*mdWriter).problems,
	(*mdWriter).changes,
	(*mdWriter).preview,
	(*mdWriter).preExisting,
	(*mdWriter).waived,
	(*mdWriter).renderWarnings,
}

func writeMarkdown(w io.Writer, r *Report, opts Options) error {
	var out string
	for rows := maxTableRows; ; rows /= 2 {
		md := &mdWriter{sourceURL: opts.SourceURL, pathPrefix: opts.PathPrefix, rows: rows}
		for _, section := range mdSections {
			section(md, r)
		}
		out = md.b.String()
		if len(out) <= maxComment || rows == 0 {
			break
		}
	}
	_, err := io.WriteString(w, out)
	return err
}

func (m *mdWriter) printf(format string, args ...any) { fmt.Fprintf(&m.b, format, args...) }

func (m *mdWriter) heading(r *Report) {
	icon := "✅"
	switch r.Summary.Result {
	case ResultFailed:
		icon = "❌"
	case ResultIncomplete:
		icon = "⚠️"
	}
	m.printf("%s\n### %s olmsync check %s\n\n", MarkdownMarker, icon, mdText(verdict(r)))
	rev := mdCode(r.Revision.String())
	if r.Base != nil {
		rev += " against base " + mdCode(r.Base.String())
	}
	m.printf("%s · %s", rev, mdText(strings.Join(summaryParts(r), ", ")))
	if r.Summary.FailOn == FailOnNew && r.Base != nil {
		m.printf(" · only new errors fail the check")
	}
	m.printf("\n")
	if lib := libraryLine(r); lib != "" {
		m.printf("\n%s\n", mdText(lib))
	}
}

// mainViolations is the table a reviewer reads first: with a base, the new violations;
// without one, all of them. Either way errors come first and waived ones are left to
// their own section.
func (m *mdWriter) mainViolations(r *Report) {
	title := "Violations"
	if r.Base != nil {
		title = "New violations"
	}
	var vs []Violation
	for _, v := range byImportance(r.Violations) {
		if v.Status != StatusPreExisting {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return
	}
	m.printf("\n#### %s\n\n", title)
	m.violationTable(vs, false)
}

func (m *mdWriter) preExisting(r *Report) {
	var vs []Violation
	for _, v := range byImportance(r.Violations) {
		if v.Status == StatusPreExisting {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return
	}
	m.details(plural(len(vs), "pre-existing violation", "pre-existing violations")+" (already in the base)", func() {
		m.violationTable(vs, false)
	})
}

func (m *mdWriter) waived(r *Report) {
	var vs []Violation
	for _, v := range r.Violations {
		if v.Waived {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return
	}
	m.details(plural(len(vs), "waived violation", "waived violations"), func() {
		m.violationTable(vs, true)
	})
}

func (m *mdWriter) violationTable(vs []Violation, waiver bool) {
	m.printf("| | Rule | Object | App | Location | Message |")
	if waiver {
		m.printf(" Waiver |")
	}
	m.printf("\n|:-:|---|---|---|---|---|")
	if waiver {
		m.printf("---|")
	}
	m.printf("\n")
	for i, v := range vs {
		if i == m.rows {
			m.moreRows(len(vs) - i)
			break
		}
		icon := "❌"
		if v.Severity == SeverityWarning {
			icon = "⚠️"
		}
		m.printf("| %s | %s | %s | %s | %s | %s |", icon, mdCode(v.Rule), mdCode(v.Object.String()),
			mdCode(v.AppsLabel()), m.link(v.File, v.Line), mdText(truncate(v.Message, maxCellMessage)))
		if waiver {
			m.printf(" %s |", mdText(strings.TrimPrefix(waiverText(v.Waiver), "waived: ")))
		}
		m.printf("\n")
	}
}

// collapseProblemsOver is how many problems the Markdown report shows open; a longer
// table is collapsed, so that the violations above stay in view.
const collapseProblemsOver = 5

func (m *mdWriter) problems(r *Report) {
	if len(r.Problems) == 0 {
		return
	}
	table := func() {
		m.printf("| Location | App | Message |\n|---|---|---|\n")
		for i, p := range r.Problems {
			if i == m.rows {
				m.moreRows(len(r.Problems) - i)
				break
			}
			msg := mdText(truncate(p.Message, maxCellMessage))
			switch {
			case p.Base:
				msg = "*(base revision)* " + msg
			case p.Status == StatusPreExisting:
				msg = "*(pre-existing)* " + msg
			}
			if p.Hint != "" {
				msg += "<br>hint: " + mdText(truncate(p.Hint, maxCellMessage))
			}
			m.printf("| %s | %s | %s |\n", m.link(p.File, p.Line), mdCode(p.AppsLabel()), msg)
		}
	}
	if len(r.Problems) <= collapseProblemsOver {
		m.printf("\n#### Problems\n\nInput that could not be read or rendered:\n\n")
		table()
		return
	}
	m.printf("\n#### Problems\n")
	m.details(plural(len(r.Problems), "input", "inputs")+" could not be read or rendered", table)
}

func (m *mdWriter) changes(r *Report) {
	if r.Base == nil || len(r.Changes) == 0 {
		return
	}
	m.printf("\n#### OLM changes\n\n| | Object | App | Location | Fields |\n|---|---|---|---|---|\n")
	for i, c := range r.Changes {
		if i == m.rows {
			m.moreRows(len(r.Changes) - i)
			break
		}
		icon := map[ChangeType]string{ChangeAdded: "➕ added", ChangeRemoved: "➖ removed", ChangeModified: "✏️ modified"}[c.Type]
		fields := make([]string, 0, len(c.Fields))
		for _, f := range c.Fields {
			fields = append(fields, mdField(c.Type, f))
		}
		m.printf("| %s | %s | %s | %s | %s |\n", icon, mdCode(c.Object.String()), mdCode(c.App),
			m.link(c.File, c.Line), strings.Join(fields, "<br>"))
	}
}

func (m *mdWriter) renderWarnings(r *Report) {
	if len(r.Warnings) == 0 {
		return
	}
	m.details(plural(len(r.Warnings), "render warning", "render warnings"), func() {
		for i, w := range r.Warnings {
			if i == m.rows {
				m.printf("- … and %d more\n", len(r.Warnings)-i)
				break
			}
			m.printf("- %s: %s\n", m.link(w.File, w.Line), mdText(truncate(w.Message, maxCellMessage)))
		}
	})
}

// details wraps a section in a collapsed <details> block.
func (m *mdWriter) details(summary string, body func()) {
	// Markdown is not read inside an HTML block: summaries are olmsync's own words only.
	m.printf("\n<details><summary>%s</summary>\n\n", summary)
	body()
	m.printf("\n</details>\n")
}

func (m *mdWriter) moreRows(n int) {
	// GitHub fills a short row with empty cells.
	m.printf("| … and %d more: see the job log or the JSON report |\n", n)
}

// link is a location as code, linked to the file when a source URL is set.
func (m *mdWriter) link(file string, line int) string {
	loc := mdCode(location(file, line))
	if m.sourceURL == "" || file == "" {
		return loc
	}
	u := m.sourceURL + (&url.URL{Path: prefixed(m.pathPrefix, file)}).EscapedPath()
	if line > 0 {
		u += "#L" + strconv.Itoa(line)
	}
	return "[" + loc + "](" + strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(u) + ")"
}

// mdField is one field change in a table cell: "`channel`: `stable` → `fast`".
func mdField(t ChangeType, f FieldChange) string {
	name := mdCode(fieldName(f.Path))
	val := func(s string) string {
		if s == "" {
			return "*(unset)*"
		}
		return mdCode(s)
	}
	switch {
	case f.Omitted:
		return name + ": changed *(too large to show)*"
	case t == ChangeAdded:
		return name + ": " + val(f.New)
	case t == ChangeRemoved:
		return name + ": " + val(f.Old)
	default:
		return name + ": " + val(f.Old) + " → " + val(f.New)
	}
}

// mdTextEscaper escapes what Markdown would read as markup in running text or a table
// cell: emphasis, code, links, HTML, strikethrough, math, entities and the cell
// separator. An '@' gets a zero-width space after it, so that a message naming
// "@team" does not notify the team on every comment update.
var mdTextEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `<`, `\<`, `>`, `\>`,
	`|`, `\|`, `~`, `\~`, `$`, `\$`, `&`, `\&`, `@`, "@\u200b",
	"\r\n", "<br>", "\n", "<br>", "\r", "<br>",
)

// mdText is plain text made safe for a Markdown table cell.
func mdText(s string) string { return mdTextEscaper.Replace(s) }

// mdCode is s as inline code that is safe in a table cell; "" stays empty.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", `\|`).Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if len(fence) > 1 || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
