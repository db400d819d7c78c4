package sources

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"golang.org/x/crypto/ssh/knownhosts"
)

// ErrReadOnly is returned (wrapped in an *fs.PathError) by every method of a
// tree's filesystem that would write: a tree is a snapshot of a revision.
var ErrReadOnly = errors.New("the repository tree is read-only")

// UnreachableError means the git server could not be reached or stopped
// answering: DNS, a refused or reset connection, a timeout, a 5xx answer.
// A caller keeps its last good revision and retries later.
type UnreachableError struct {
	URL string // redacted
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("git server of %s is unreachable: %v", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// AuthError means the server refused the credentials (or wanted some), or
// its ssh host key is unknown or changed. The message never holds a secret.
type AuthError struct {
	URL string // redacted
	Err error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("authentication to %s failed: %v", e.URL, e.Err)
}

func (e *AuthError) Unwrap() error { return e.Err }

// UnknownRefError means the branch, tag, commit, semver range or local
// revision names nothing in the repository.
type UnknownRefError struct {
	Source string // redacted URL or local directory
	Ref    string // as the caller wrote it, e.g. `branch "main"` or `revision "HEAD~3"`
	Detail string // optional: why, e.g. the tags a semver range saw
}

func (e *UnknownRefError) Error() string {
	msg := fmt.Sprintf("%s not found in %s", e.Ref, e.Source)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// PathNotFoundError means a fetched revision has no folder at the path asked
// for (FetchRequest.Path): the fetch worked, the repository's layout does not.
type PathNotFoundError struct {
	Source   string // redacted URL
	Path     string
	Revision string // the revision fetched, as Tree.Revision names it
}

func (e *PathNotFoundError) Error() string {
	return fmt.Sprintf("folder %q not found in %s of %s", e.Path, e.Revision, e.Source)
}

// NotRepositoryError means the directory is not inside a git repository, or
// the URL names no repository on the server.
type NotRepositoryError struct {
	Source string // redacted URL or local directory
	Err    error
}

func (e *NotRepositoryError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%s is not a git repository", e.Source)
	}
	return fmt.Sprintf("%s is not a git repository: %v", e.Source, e.Err)
}

func (e *NotRepositoryError) Unwrap() error { return e.Err }

// PathEscapeError means a path leaves the repository root, lexically (`..`,
// an absolute path elsewhere) or through a symbolic link.
type PathEscapeError struct {
	Path   string // the path asked for, relative to the root when it lies inside it
	Link   string // the symlink, relative to the root, that leads out; empty for a lexical escape
	Target string // the symlink's target as stored
}

func (e *PathEscapeError) Error() string {
	if e.Link == "" {
		return fmt.Sprintf("path %q is outside the repository root", e.Path)
	}
	if e.Link == e.Path {
		return fmt.Sprintf("path %q is a symlink to %q, outside the repository root", e.Path, e.Target)
	}
	return fmt.Sprintf("path %q goes through symlink %q to %q, outside the repository root",
		e.Path, e.Link, e.Target)
}

// FileTooLargeError means a file is larger than the tree's size bound
// (Limits.MaxFileSize).
type FileTooLargeError struct {
	Path  string // relative to the repository root
	Size  int64  // -1 when the file grew past the limit while being read
	Limit int64
}

func (e *FileTooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("file %q is over the limit of %d bytes", e.Path, e.Limit)
	}
	return fmt.Sprintf("file %q is %d bytes, over the limit of %d bytes", e.Path, e.Size, e.Limit)
}

// classifyRemoteError turns what go-git returned for a remote operation into
// one of the typed errors above, naming the redacted URL. Errors it cannot
// classify come back wrapped with the URL. Secrets are scrubbed from the
// messages in every case.
func classifyRemoteError(redacted string, err error, secrets []string) error {
	err = scrub(err, secrets)
	switch {
	case err == nil:
		return nil
	case isAuthError(err):
		return &AuthError{URL: redacted, Err: err}
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return &NotRepositoryError{Source: redacted, Err: err}
	case isCertificateError(err):
		// Reached, but not trusted: a configuration problem (CA bundle), not
		// an outage, so it is not an UnreachableError.
		return fmt.Errorf("git %s: %w", redacted, err)
	case isUnreachable(err):
		return &UnreachableError{URL: redacted, Err: err}
	}
	return fmt.Errorf("git %s: %w", redacted, err)
}

func isAuthError(err error) bool {
	var keyErr *knownhosts.KeyError
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired),
		errors.Is(err, transport.ErrAuthorizationFailed),
		errors.Is(err, transport.ErrInvalidAuthMethod),
		errors.As(err, &keyErr):
		return true
	}
	// golang.org/x/crypto/ssh builds this one with fmt.Errorf and no sentinel.
	return strings.Contains(err.Error(), "ssh: unable to authenticate")
}

func isCertificateError(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

func isUnreachable(err error) bool {
	var (
		netErr  net.Error
		urlErr  *url.Error
		httpErr *githttp.Err
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded),
		// The server hung up mid-answer.
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH),
		errors.As(err, &netErr),
		errors.As(err, &urlErr):
		return true
	case errors.As(err, &httpErr):
		return httpErr.StatusCode() >= 500
	}
	return false
}

// scrubbedError replaces every secret in a cause's message with "***" while
// keeping the cause for errors.Is and errors.As.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub hides the given secrets in err's message. It is defence in depth:
// credentials never go into URLs handed to go-git, but a server may echo
// what it was sent.
func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := redactSecrets(msg, secrets)
	if clean == msg {
		return err
	}
	return &scrubbedError{msg: clean, err: err}
}

func redactSecrets(s string, secrets []string) string {
	for _, secret := range secrets {
		// Very short secrets would blank out ordinary words; they are not worth
		// protecting this way, and real tokens and passwords are longer.
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "***")
		}
	}
	return s
}
