package dashboard

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an answer other than 200: its HTTP status and a message for the caller. The
// message never holds a token, nor anything the caller may not read.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

func badRequest(format string, args ...any) error {
	return &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) error {
	return &Error{Status: http.StatusConflict, Message: fmt.Sprintf(format, args...)}
}

// errUnauthenticated is the answer to a request without a token, or with one the API
// server does not accept: the same for both, so it tells nothing about the token.
var errUnauthenticated = &Error{Status: http.StatusUnauthorized,
	Message: "a bearer token the API server accepts is needed (Authorization: Bearer <token>)"}

func forbidden(user, verb, what string) error {
	return &Error{Status: http.StatusForbidden, Message: fmt.Sprintf("%s may not %s %s", user, verb, what)}
}

// statusOf is the HTTP status of an error: an *Error's, else 500.
func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return http.StatusInternalServerError
}
