package gitsync

import (
	"errors"
	"fmt"
)

// A step ends the pipeline with one of these, or with a plain error for a failure of
// olmsync's own (a status patch, the context ending), which is returned to
// controller-runtime and retried with backoff.

// stalledError: the spec can never work as written (a ref that is not a ref, a path out
// of the repository, a file:// URL where local sources are off). Stalled=True; no retry
// until the spec changes.
type stalledError struct {
	reason string
	msg    string
}

func (e *stalledError) Error() string { return e.msg }

func stalled(reason, format string, args ...any) *stalledError {
	return &stalledError{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// waitError: something outside the Sync must change first — the git server answering, a
// Secret or service account appearing, a new commit fixing the repository, the API server
// accepting an object. The failing step's condition says what; the Sync is looked at again
// after the retry interval rather than with exponential backoff, since a repeat sooner
// would meet the same answer.
type waitError struct {
	msg string
}

func (e *waitError) Error() string { return e.msg }

func waiting(format string, args ...any) *waitError {
	return &waitError{msg: fmt.Sprintf(format, args...)}
}

// errFetching: the Sync's fetch is under way, off the workers. The reconcile ends with
// nothing to say (Ready stays what it was); the fetch puts the Sync back on the queue
// when it is done, and that reconcile goes on with its outcome.
var errFetching = errors.New("fetch under way")
