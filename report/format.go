package report

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Format is an output format of `olmsync check --format`.
type Format string

const (
	// FormatText is for people at a terminal or reading a CI log.
	FormatText Format = "text"
	// FormatJSON is the Report document itself.
	FormatJSON Format = "json"
	// FormatSARIF is SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.
	FormatSARIF Format = "sarif"
	// FormatJUnit is JUnit XML for GitLab, Jenkins and other test report viewers.
	FormatJUnit Format = "junit"
	// FormatGitHub is GitHub Actions workflow commands: annotations on the changed lines.
	FormatGitHub Format = "github"
	// FormatMarkdown is a pull request comment.
	FormatMarkdown Format = "markdown"
)

// Formats lists every format, in the order help text shows them.
func Formats() []Format {
	return []Format{FormatText, FormatJSON, FormatSARIF, FormatJUnit, FormatGitHub, FormatMarkdown}
}

// ErrUnknownFormat is returned by ParseFormat for a name that is not a format.
var ErrUnknownFormat = errors.New("unknown report format")

// ParseFormat reads a --format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, 0, len(Formats()))
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownFormat, s, strings.Join(names, ", "))
}

// GroupBy is how the text and JUnit formats group violations.
type GroupBy string

const (
	// GroupByDefault is each format's own default: file for text, app for JUnit.
	GroupByDefault GroupBy = ""
	GroupByFile    GroupBy = "file"
	GroupByApp     GroupBy = "app"
	GroupByRule    GroupBy = "rule"
)

// ParseGroupBy reads a --group-by value; the empty string is GroupByDefault.
func ParseGroupBy(s string) (GroupBy, error) {
	switch g := GroupBy(s); g {
	case GroupByDefault, GroupByFile, GroupByApp, GroupByRule:
		return g, nil
	}
	return "", fmt.Errorf("unknown --group-by value %q: want %q, %q or %q", s, GroupByFile, GroupByApp, GroupByRule)
}

// Options tune the writers. The zero value is right for a file or a pipe.
type Options struct {
	// Color turns on ANSI colours in the text format. The CLI sets it when its output is
	// a terminal (golang.org/x/term) and NO_COLOR is unset; no other format uses it.
	Color bool
	// GroupBy groups the text format's violations (by file unless set) and JUnit's test
	// suites (by app unless set).
	GroupBy GroupBy
	// SourceURL, when set, turns the Markdown format's locations into links: the file's
	// repository-relative path is appended, then "#L<line>". For GitHub:
	// "https://github.com/<owner>/<repo>/blob/<commit>/".
	SourceURL string
	// PathPrefix is the checked folder's path inside its repository ("gitops" for a
	// GitOps folder of a monorepo). The report's paths are relative to the checked
	// folder; the formats GitHub reads against the repository's top (SARIF, GitHub
	// annotations, Markdown links) put the prefix in front of them.
	PathPrefix string
}

// Write writes a completed report (see Complete) in a format.
func Write(w io.Writer, r *Report, f Format, opts Options) error {
	if r.APIVersion != APIVersion || r.Summary.Result == "" {
		return errors.New("write report: the report was not completed (call report.Complete first)")
	}
	if f != FormatJSON {
		r = sanitized(r)
	}
	var err error
	switch f {
	case FormatText:
		err = writeText(w, r, opts)
	case FormatJSON:
		err = writeJSON(w, r)
	case FormatSARIF:
		err = writeSARIF(w, r, opts)
	case FormatJUnit:
		err = writeJUnit(w, r, opts)
	case FormatGitHub:
		err = writeGitHub(w, r, opts)
	case FormatMarkdown:
		err = writeMarkdown(w, r, opts)
	default:
		_, err = ParseFormat(string(f))
	}
	if err != nil {
		return fmt.Errorf("write %s report: %w", f, err)
	}
	return nil
}

// errWriter keeps the first error of a series of writes, so that writers can print
// line after line and check once at the end.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) print(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}
