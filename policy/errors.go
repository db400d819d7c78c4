package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// ErrInvalidWaiver is wrapped by New's error for a config waiver it cannot use (no rule,
// object or reason).
var ErrInvalidWaiver = errors.New("invalid waiver")

// PolicyError is a set of rules olmsync cannot use: a Rego file that does not parse or
// compile, a folder without rules, a rule whose results are not deny/warn results, or a
// rule that fails while it is evaluated. Each problem names the file and, where OPA knows
// it, the line.
type PolicyError struct {
	Problems []Problem
	// cause is what stopped an evaluation (ErrTimeout, the memory ceiling), for errors.Is
	// and errors.As.
	cause error
}

// Unwrap is what stopped the evaluation, if anything did.
func (e *PolicyError) Unwrap() error { return e.cause }

// Problem is one thing wrong with a rule file.
type Problem struct {
	File    string
	Line    int
	Column  int
	Message string
}

func (p Problem) String() string {
	switch {
	case p.File == "":
		return p.Message
	case p.Line == 0:
		return fmt.Sprintf("%s: %s", p.File, p.Message)
	case p.Column == 0:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	default:
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Column, p.Message)
	}
}

func (e *PolicyError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	if len(lines) == 1 {
		return "policy: " + lines[0]
	}
	return fmt.Sprintf("policy: %d problems:\n  %s", len(lines), strings.Join(lines, "\n  "))
}

// policyErrorFrom turns OPA's parse, compile and evaluation errors into a PolicyError
// that names file and line; other errors are returned as they are.
func policyErrorFrom(err error) error {
	var astErrs ast.Errors
	if errors.As(err, &astErrs) {
		pe := &PolicyError{}
		for _, e := range astErrs {
			pe.Problems = append(pe.Problems, problemAt(e.Location, fmt.Sprintf("%s: %s", e.Code, e.Message)))
		}
		return pe
	}
	var astErr *ast.Error
	if errors.As(err, &astErr) {
		return &PolicyError{Problems: []Problem{problemAt(astErr.Location, fmt.Sprintf("%s: %s", astErr.Code, astErr.Message))}}
	}
	var evalErr *topdown.Error
	if errors.As(err, &evalErr) {
		return &PolicyError{Problems: []Problem{problemAt(evalErr.Location, fmt.Sprintf("%s: %s", evalErr.Code, evalErr.Message))}}
	}
	return err
}

func problemAt(loc *ast.Location, msg string) Problem {
	if loc == nil {
		return Problem{Message: msg}
	}
	return Problem{File: loc.File, Line: loc.Row, Column: loc.Col, Message: msg}
}
