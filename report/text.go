package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// ANSI styles of the text format.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// textWriter writes the text format: sections in order, each printing nothing when it has
// nothing to say.
//
// The text format ends up in CI logs, and what it prints comes from the pull request under
// check (file names, messages quoting manifests). So every string from the report goes
// through style or plain, which escape control characters (a terminal would obey an
// escape sequence), and print keeps a line from starting with "::" (GitHub's runner would
// run it as a workflow command, after trimming leading spaces).
type textWriter struct {
	errWriter
	color bool
	by    GroupBy
}

// textSections are the parts of the text format, in order. A later section (the OLM
// preview) slots in here without touching the others.
var textSections = []func(*textWriter, *Report){
	(*textWriter).header,
	(*textWriter).violations,
	(*textWriter).problems,
	(*textWriter).renderWarnings,
	(*textWriter).notChecked,
	(*textWriter).changes,
	(*textWriter).preview,
	(*textWriter).summary,
}

func writeText(w io.Writer, r *Report, opts Options) error {
	t := &textWriter{errWriter: errWriter{w: w}, color: opts.Color, by: cmp.Or(opts.GroupBy, GroupByFile)}
	for _, section := range textSections {
		section(t, r)
	}
	return t.err
}

// style is s made safe for a terminal and, when colour is on, wrapped in an ANSI style.
func (t *textWriter) style(code, s string) string {
	s = plain(s)
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

// plain escapes the control and bidirectional characters of s other than newline and
// tab, the way Go quotes them ("\x1b"); a Windows line break counts as a newline. Write
// has escaped the report already (sanitize.go); plain is for text the writer makes up.
func plain(s string) string { return escapeUnsafe(s) }

func isEscapedControl(c rune) bool {
	return unicode.IsControl(c) && c != '\n' && c != '\t'
}

// print writes s, putting a zero-width space before any "::" that would open a line: the
// runner does not trim it, so the line is no longer a workflow command, and a person sees
// no difference.
func (t *textWriter) print(s string) {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		rest := strings.TrimLeftFunc(line, unicode.IsSpace)
		if strings.HasPrefix(rest, "::") {
			lines[i] = line[:len(line)-len(rest)] + "\u200b" + rest
		}
	}
	t.errWriter.print(strings.Join(lines, "\n"))
}

func (t *textWriter) header(r *Report) {
	t.print(t.style(ansiBold, checkedWhat(r)) + "\n")
}

func (t *textWriter) violations(r *Report) {
	vs := slices.Clone(r.Violations)
	slices.SortStableFunc(vs, func(a, b Violation) int {
		return cmp.Compare(groupKey(r, a, t.by), groupKey(r, b, t.by))
	})
	for _, group := range runsOf(vs, func(v Violation) string { return groupKey(r, v, t.by) }) {
		t.print("\n" + t.style(ansiBold, groupKey(r, group[0], t.by)) + "\n")
		width := 0
		for _, v := range group {
			width = max(width, len(t.where(v)))
		}
		for _, v := range group {
			t.violation(v, width)
		}
	}
}

// where is a violation's location within its group: the line when grouped by file, else
// file and line.
func (t *textWriter) where(v Violation) string {
	if t.by == GroupByFile {
		if v.Line > 0 {
			return strconv.Itoa(v.Line)
		}
		return "-"
	}
	return cmp.Or(location(v.File, v.Line), "-")
}

func (t *textWriter) violation(v Violation, width int) {
	sev := fmt.Sprintf("%-7s", v.Severity)
	if v.Severity == SeverityError {
		sev = t.style(ansiRed+ansiBold, sev)
	} else {
		sev = t.style(ansiYellow, sev)
	}
	var tags []string
	switch {
	case t.by != GroupByApp && len(v.Apps) > 1:
		tags = append(tags, "apps "+plain(v.AppsLabel()))
	case t.by != GroupByApp && v.App != "":
		tags = append(tags, "app "+plain(v.App))
	case len(v.Apps) > 1:
		tags = append(tags, fmt.Sprintf("and %d more apps", len(v.Apps)-1))
	}
	switch v.Status {
	case StatusNew:
		tags = append(tags, t.style(ansiCyan, string(v.Status)))
	case StatusPreExisting:
		tags = append(tags, string(v.Status))
	case StatusUnknown:
		tags = append(tags, "unknown: in the base revision; the app no longer renders")
	}
	head := fmt.Sprintf("  %-*s  %s  %s", width, plain(t.where(v)), sev, plain(v.Rule))
	if obj := v.Object.String(); obj != "" {
		head += "  " + plain(obj)
	}
	if len(tags) > 0 {
		head += "  (" + strings.Join(tags, ", ") + ")"
	}
	indent := strings.Repeat(" ", width+4)
	body := indentLines(plain(v.Message), indent)
	if v.Waived || v.Status == StatusUnknown {
		if v.Waived {
			body += "\n" + indent + plain(waiverText(v.Waiver))
		}
		head, body = t.dim(head), t.dim(body)
	}
	t.print(head + "\n" + body + "\n")
}

// dim greys out text that is already safe (a waived violation).
func (t *textWriter) dim(s string) string {
	if !t.color {
		return s
	}
	return ansiDim + s + ansiReset
}

func (t *textWriter) problems(r *Report) {
	if len(r.Problems) == 0 {
		return
	}
	t.print("\n" + t.style(ansiBold, "Problems: input that could not be read or rendered") + "\n")
	for _, p := range r.Problems {
		var tags []string
		switch {
		case len(p.Apps) > 1:
			tags = append(tags, "apps "+p.AppsLabel())
		case p.App != "":
			tags = append(tags, "app "+p.App)
		}
		if p.Base {
			tags = append(tags, "base revision")
		}
		if p.Status == StatusPreExisting {
			tags = append(tags, "pre-existing")
		}
		head := "  " + t.style(ansiRed, cmp.Or(location(p.File, p.Line), "(no file)"))
		if len(tags) > 0 {
			head += "  (" + plain(strings.Join(tags, ", ")) + ")"
		}
		t.print(head + "\n" + indentLines(plain(p.Message), "      ") + "\n")
		if p.Hint != "" {
			t.print(indentLines("hint: "+plain(p.Hint), "      ") + "\n")
		}
	}
}

func (t *textWriter) renderWarnings(r *Report) {
	if len(r.Warnings) == 0 {
		return
	}
	t.print("\n" + t.style(ansiBold, "Render warnings") + "\n")
	for _, w := range r.Warnings {
		head := "  " + t.style(ansiYellow, cmp.Or(location(w.File, w.Line), "(no file)"))
		if len(w.Apps) > 0 {
			head += "  (" + noun(len(w.Apps), "app", "apps") + " " + plain(strings.Join(w.Apps, ", ")) + ")"
		}
		t.print(head + "\n" + indentLines(plain(w.Message), "      ") + "\n")
		if w.Hint != "" {
			t.print(indentLines("hint: "+plain(w.Hint), "      ") + "\n")
		}
	}
}

// notChecked says in one line each what was left out on purpose, so that a reader knows
// what the verdict does not cover.
func (t *textWriter) notChecked(r *Report) {
	if len(r.NotChecked) == 0 {
		return
	}
	t.print("\n" + t.style(ansiBold, "Not checked") + "\n")
	for _, n := range r.NotChecked {
		t.print("  " + plain(cmp.Or(location(n.File, n.Line), "(no file)")) + "  " + plain(n.Kind+" "+n.Name) + ": " + plain(n.Reason) + "\n")
	}
}

func (t *textWriter) changes(r *Report) {
	if r.Base == nil || len(r.Changes) == 0 {
		return
	}
	t.print("\n" + t.style(ansiBold, "OLM changes against the base") + "\n")
	for _, c := range r.Changes {
		mark, code := "~", ansiYellow
		switch c.Type {
		case ChangeAdded:
			mark, code = "+", ansiGreen
		case ChangeRemoved:
			mark, code = "-", ansiRed
		}
		head := fmt.Sprintf("  %s %s  %s", t.style(code, mark), plain(c.Object.String()), c.Type)
		var tags []string
		if c.App != "" {
			tags = append(tags, "app "+c.App)
		}
		if loc := location(c.File, c.Line); loc != "" {
			tags = append(tags, loc)
		}
		if len(tags) > 0 {
			head += "  (" + plain(strings.Join(tags, ", ")) + ")"
		}
		t.print(head + "\n")
		for _, f := range c.Fields {
			t.print(indentLines(plain(fieldText(c.Type, f)), "      ") + "\n")
		}
	}
}

func (t *textWriter) summary(r *Report) {
	code := ansiGreen
	switch r.Summary.Result {
	case ResultFailed:
		code = ansiRed + ansiBold
	case ResultIncomplete:
		code = ansiRed
	}
	if lib := libraryLine(r); lib != "" {
		t.print("\n" + plain(lib) + "\n")
	}
	line := t.style(code, verdict(r)) + " — " + strings.Join(summaryParts(r), ", ")
	if r.Summary.FailOn == FailOnNew && r.Base != nil {
		line += "; only new errors fail the check"
	}
	t.print("\n" + line + "\n")
}

// runsOf splits a sorted list into runs of entries with the same key.
func runsOf[T any](list []T, key func(T) string) [][]T {
	var runs [][]T
	for i, item := range list {
		if i == 0 || key(item) != key(list[i-1]) {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], item)
	}
	return runs
}

// indentLines indents every line of s, so that a message with newlines stays under its
// heading.
func indentLines(s, indent string) string {
	return indent + strings.ReplaceAll(s, "\n", "\n"+indent)
}
