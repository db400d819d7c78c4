package report

import (
	"errors"
	"fmt"
	"strings"
)

// Output is one report a check writes: a format, to a file or to standard output. One run
// of `olmsync check` writes several (`-o github -o sarif=olmsync.sarif -o
// markdown=olmsync.md`), all from the same Report, so CI renders the base and the head once
// for its annotations, its code scanning upload and its pull request comment.
type Output struct {
	Format Format
	// Path is the file the report is written to; "" is standard output.
	Path string
}

// String is the output as -o takes it.
func (o Output) String() string {
	if o.Path == "" {
		return string(o.Format)
	}
	return string(o.Format) + "=" + o.Path
}

// ParseOutput reads an -o value: FORMAT (to standard output) or FORMAT=FILE. A FORMAT that
// reads like a file name is what -o meant before it named the format: the error says how
// to write to a file.
func ParseOutput(s string) (Output, error) {
	name, path, hasPath := strings.Cut(s, "=")
	if hasPath && path == "" {
		return Output{}, fmt.Errorf("-o %s: no file after %q (FORMAT=FILE, or FORMAT alone for standard output)", s, name+"=")
	}
	f, err := ParseFormat(name)
	if err != nil {
		if !hasPath && strings.ContainsAny(name, "./") {
			return Output{}, fmt.Errorf("%w (-o is the format, as in kubectl and conftest; write the report to a file with --output-file %s, or -o FORMAT=%s)", err, name, name)
		}
		return Output{}, err
	}
	return Output{Format: f, Path: path}, nil
}

// ParseOutputs reads the -o values of one run. file (--output-file), when not "", is the
// file of the one output that names none. At most one output goes to standard output and
// at most one to each file: two reports interleaved, or one overwriting another, are a
// usage error, not a report.
func ParseOutputs(values []string, file string) ([]Output, error) {
	outs := make([]Output, 0, len(values))
	for _, v := range values {
		o, err := ParseOutput(v)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	if file != "" {
		var toStdout []int
		for i, o := range outs {
			if o.Path == "" {
				toStdout = append(toStdout, i)
			}
		}
		switch len(toStdout) {
		case 0:
			return nil, fmt.Errorf("--output-file %s: every -o names its own file", file)
		case 1:
			outs[toStdout[0]].Path = file
		default:
			return nil, fmt.Errorf("--output-file %s names the file of one report, and %d -o have none: give each its file, -o FORMAT=FILE", file, len(toStdout))
		}
	}
	var errs []error
	seen := map[string]Output{}
	for _, o := range outs {
		if prev, ok := seen[o.Path]; ok {
			if o.Path == "" {
				errs = append(errs, fmt.Errorf("-o %s and -o %s both write to standard output: give all but one a file, -o FORMAT=FILE", prev, o))
			} else {
				errs = append(errs, fmt.Errorf("-o %s and -o %s write to the same file", prev, o))
			}
			continue
		}
		seen[o.Path] = o
	}
	return outs, errors.Join(errs...)
}

// HasFormat says whether any of the outputs is in format f.
func HasFormat(outs []Output, f Format) bool {
	for _, o := range outs {
		if o.Format == f {
			return true
		}
	}
	return false
}

// WithoutObjects is r without its list of checked objects (Objects, Summary.Objects): what
// a format other than JUnit writes when the objects were listed only because the same run
// also writes JUnit, which turns each into a test case. r is not changed.
func WithoutObjects(r *Report) *Report {
	if r.Objects == nil {
		return r
	}
	c := *r
	c.Objects = nil
	c.Summary.Objects = 0
	return &c
}
