package report

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Complete makes a report ready to write: it sets apiVersion and kind, checks the values
// the document allows, makes paths slash-separated and repository-relative in form,
// gives every violation without a severity its rule's, adds a catalog entry for every
// rule a violation names that the catalog lacks, merges warnings repeated for one file,
// sorts every list into a stable order, and computes the summary and its verdict under
// failOn. The writers rely on all of that. Complete may be called again after a change.
// It returns every invalid value it met, each naming the entry; the report is still
// completed as far as it can be.
func Complete(r *Report, failOn FailOn) error {
	r.APIVersion, r.Kind = APIVersion, Kind
	if r.Tool.Name == "" {
		r.Tool.Name = "olmsync"
	}
	var errs []error
	if _, err := ParseFailOn(string(failOn)); err != nil {
		errs = append(errs, err)
		failOn = FailOnAll
	}
	errs = append(errs, completeRules(r)...)
	errs = append(errs, completeViolations(r)...)
	errs = append(errs, completeChanges(r)...)
	completeInputs(r)
	completePreview(r)
	completeExtensions(r)
	r.Summary = summarize(r, failOn)
	return errors.Join(errs...)
}

func completeRules(r *Report) []error {
	var errs []error
	seen := map[string]bool{}
	for i := range r.Rules {
		rule := &r.Rules[i]
		switch {
		case rule.ID == "":
			errs = append(errs, fmt.Errorf("rule %d has no id", i))
		case seen[rule.ID]:
			errs = append(errs, fmt.Errorf("rule %s is in the catalog twice", rule.ID))
		}
		seen[rule.ID] = true
		if rule.Title == "" {
			rule.Title = rule.ID
		}
		if !validSeverity(rule.Severity) {
			errs = append(errs, fmt.Errorf("rule %s: unknown severity %q", rule.ID, rule.Severity))
		}
	}
	// A violation of a rule the catalog does not describe (a custom rule without
	// metadata) still needs an entry: SARIF results point at one.
	for _, v := range r.Violations {
		if v.Rule != "" && !seen[v.Rule] {
			seen[v.Rule] = true
			r.Rules = append(r.Rules, Rule{ID: v.Rule, Title: v.Rule, Severity: cmp.Or(v.Severity, SeverityError)})
		}
	}
	slices.SortFunc(r.Rules, func(a, b Rule) int { return cmp.Compare(a.ID, b.ID) })
	return errs
}

func completeViolations(r *Report) []error {
	var errs []error
	for i := range r.Violations {
		v := &r.Violations[i]
		v.File = cleanPath(v.File)
		if v.Waiver != nil {
			v.Waived = true
		}
		if v.Severity == "" {
			if rule, ok := r.rule(v.Rule); ok {
				v.Severity = rule.Severity
			}
		}
		name := fmt.Sprintf("violation %d (%s %s)", i, v.Rule, v.Object)
		switch {
		case v.Rule == "":
			errs = append(errs, fmt.Errorf("%s has no rule", name))
		case !validSeverity(v.Severity):
			errs = append(errs, fmt.Errorf("%s: unknown severity %q", name, v.Severity))
		case v.Status != "" && v.Status != StatusNew && v.Status != StatusPreExisting && v.Status != StatusUnknown:
			errs = append(errs, fmt.Errorf("%s: unknown status %q", name, v.Status))
		case v.Status != "" && r.Base == nil:
			errs = append(errs, fmt.Errorf("%s: status %q without a base revision", name, v.Status))
		}
	}
	slices.SortStableFunc(r.Violations, compareViolations)
	return errs
}

func completeChanges(r *Report) []error {
	var errs []error
	for i := range r.Changes {
		c := &r.Changes[i]
		c.File = cleanPath(c.File)
		switch c.Type {
		case ChangeAdded, ChangeRemoved, ChangeModified:
		default:
			errs = append(errs, fmt.Errorf("change %d (%s): unknown type %q", i, c.Object, c.Type))
		}
	}
	if len(r.Changes) > 0 && r.Base == nil {
		errs = append(errs, errors.New("changes listed without a base revision"))
	}
	slices.SortStableFunc(r.Changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.App, b.App),
			compareRefs(a.Object, b.Object), cmp.Compare(a.Type, b.Type))
	})
	return errs
}

// completeInputs normalises the lists that describe the input: apps, problems, warnings
// and checked objects.
func completeInputs(r *Report) {
	for i := range r.Apps {
		r.Apps[i].Path = cleanPath(r.Apps[i].Path)
		if e := r.Apps[i].Error; e != nil {
			e.File = cleanPath(e.File)
		}
	}
	slices.SortStableFunc(r.Apps, func(a, b App) int {
		return cmp.Or(compareBool(a.Library, b.Library), cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Name, b.Name))
	})
	for i := range r.Problems {
		r.Problems[i].File = cleanPath(r.Problems[i].File)
	}
	// The problems that decide the verdict come first: the checked revision's new ones,
	// then its pre-existing ones, then the base's.
	slices.SortStableFunc(r.Problems, func(a, b Problem) int {
		return cmp.Or(compareBool(a.Base, b.Base), compareBool(a.Status == StatusPreExisting, b.Status == StatusPreExisting),
			cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.App, b.App), cmp.Compare(a.Message, b.Message))
	})
	for i := range r.NotChecked {
		r.NotChecked[i].File = cleanPath(r.NotChecked[i].File)
	}
	slices.SortStableFunc(r.NotChecked, func(a, b NotChecked) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Name, b.Name))
	})
	r.Warnings = mergeWarnings(r.Warnings)
	for i := range r.Objects {
		r.Objects[i].File = cleanPath(r.Objects[i].File)
	}
	slices.SortStableFunc(r.Objects, func(a, b Object) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), compareRefs(a.Object, b.Object))
	})
	r.Apps = nonNil(r.Apps)
	r.Rules = nonNil(r.Rules)
	r.Violations = nonNil(r.Violations)
	r.Changes = nonNil(r.Changes)
	r.Problems = nonNil(r.Problems)
	r.Warnings = nonNil(r.Warnings)
}

// mergeWarnings keeps one warning per file, line and message, listing every app that met
// it: a base shared by several apps is built once per app, and kustomize warns each time.
func mergeWarnings(ws []Warning) []Warning {
	type key struct {
		file    string
		line    int
		message string
	}
	index := map[key]int{}
	var out []Warning
	for _, w := range ws {
		w.File = cleanPath(w.File)
		k := key{w.File, w.Line, w.Message}
		if i, ok := index[k]; ok {
			out[i].Apps = append(out[i].Apps, w.Apps...)
			continue
		}
		index[k] = len(out)
		w.Apps = slices.Clone(w.Apps)
		out = append(out, w)
	}
	for i := range out {
		slices.Sort(out[i].Apps)
		out[i].Apps = slices.Compact(out[i].Apps)
	}
	slices.SortStableFunc(out, func(a, b Warning) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Message, b.Message))
	})
	return out
}

func summarize(r *Report, failOn FailOn) Summary {
	s := Summary{
		FailOn:         failOn,
		Apps:           len(r.Apps),
		Objects:        len(r.Objects),
		Changes:        len(r.Changes),
		Problems:       len(r.Problems),
		RenderWarnings: len(r.Warnings),
		NotChecked:     len(r.NotChecked),
	}
	for _, a := range r.Apps {
		if a.Library {
			s.LibraryRoots++
		}
	}
	for _, w := range r.Warnings {
		if w.Unchecked {
			s.UncheckedChanges++
		}
	}
	for _, v := range r.Violations {
		if v.Waived {
			s.Waived++
			continue
		}
		if v.Status == StatusUnknown {
			s.Unknown++
			continue
		}
		if v.Severity == SeverityError {
			s.Errors++
		} else {
			s.Warnings++
		}
		switch v.Status {
		case StatusNew:
			s.New++
		case StatusPreExisting:
			s.PreExisting++
		}
	}
	s.Result = resultOf(ExitCode(r, failOn))
	return s
}

// rule looks a rule up in the catalog.
func (r *Report) rule(id string) (Rule, bool) {
	for _, rule := range r.Rules {
		if rule.ID == id {
			return rule, true
		}
	}
	return Rule{}, false
}

// compareViolations is the order of violations everywhere: by file and line, then rule
// and object, so that output is stable from run to run.
func compareViolations(a, b Violation) int {
	return cmp.Or(
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Rule, b.Rule),
		compareRefs(a.Object, b.Object),
		cmp.Compare(a.App, b.App),
		cmp.Compare(a.Message, b.Message),
		cmp.Compare(a.Severity, b.Severity),
	)
}

func compareRefs(a, b ObjectRef) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name), cmp.Compare(a.APIVersion, b.APIVersion))
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	default:
		return 1
	}
}

func validSeverity(s Severity) bool { return s == SeverityError || s == SeverityWarning }

// cleanPath writes a repository-relative path the way every format wants it:
// slash-separated, without a leading "./".
func cleanPath(p string) string {
	p = filepath.ToSlash(p)
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
