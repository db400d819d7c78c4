package report

import (
	"fmt"
)

// Exit codes of `olmsync check`, the ones CI tools expect from a linter.
const (
	// ExitOK: no violation that counts is at error severity.
	ExitOK = 0
	// ExitViolations: at least one is.
	ExitViolations = 1
	// ExitIncomplete: bad usage, or input of the checked revision that could not be read
	// or rendered. It wins over ExitViolations: a check that could not see everything
	// cannot pass, and its violations are reported all the same.
	ExitIncomplete = 2
)

// FailOn says which violations can fail a check (`--fail-on`).
type FailOn string

const (
	// FailOnAll: every error that is not waived fails the check.
	FailOnAll FailOn = "all"
	// FailOnNew: only errors that are new against the base fail it, so a pull request
	// is not blocked by what the base branch already had.
	FailOnNew FailOn = "new"
)

// ParseFailOn reads a --fail-on value; the empty string is FailOnAll.
func ParseFailOn(s string) (FailOn, error) {
	switch FailOn(s) {
	case "", FailOnAll:
		return FailOnAll, nil
	case FailOnNew:
		return FailOnNew, nil
	}
	return "", fmt.Errorf("unknown --fail-on value %q: want %q or %q", s, FailOnAll, FailOnNew)
}

// ExitCode decides how `olmsync check` exits for a report: ExitIncomplete when an input of
// the checked revision could not be read or rendered, else ExitViolations when a
// violation that counts is at error severity, else ExitOK. Waived violations and warnings
// never count; under FailOnNew only violations and problems that are not pre-existing
// count (without a base, that is all of them), so what the base branch already had does
// not turn a pull request red. Violations of unknown status never count.
func ExitCode(r *Report, failOn FailOn) int {
	for _, p := range r.Problems {
		if counts(p, failOn) {
			return ExitIncomplete
		}
	}
	for _, v := range r.Violations {
		if fails(v, failOn) {
			return ExitViolations
		}
	}
	return ExitOK
}

// fails reports whether v fails the check under failOn.
func fails(v Violation, failOn FailOn) bool {
	if v.Waived || v.Severity != SeverityError || v.Status == StatusUnknown {
		return false
	}
	return failOn != FailOnNew || v.Status != StatusPreExisting
}

// counts reports whether a problem makes the check incomplete under failOn: a problem of
// the checked revision, unless failOn is new and the base has it too.
func counts(p Problem, failOn FailOn) bool {
	if p.Base {
		return false
	}
	return failOn != FailOnNew || p.Status != StatusPreExisting
}

// resultOf names the verdict an exit code stands for.
func resultOf(code int) Result {
	switch code {
	case ExitOK:
		return ResultPassed
	case ExitViolations:
		return ResultFailed
	default:
		return ResultIncomplete
	}
}
