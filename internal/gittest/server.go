package gittest

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Upstream is a bare repository the code under test fetches from, and a working clone
// that commits and pushes to it while the test runs.
type Upstream struct {
	// Root is the folder a server serves; it holds the bare repository project.git.
	Root string
	// Bare is the bare repository, Work the working clone.
	Bare, Work string
}

// NewUpstream makes an upstream whose main branch has one commit of files.
func NewUpstream(tb testing.TB, files map[string]string) *Upstream {
	tb.Helper()
	u := &Upstream{Work: Init(tb), Root: tb.TempDir()}
	Commit(tb, u.Work, files, "initial")
	u.Bare = filepath.Join(u.Root, "project.git")
	Git(tb, u.Root, "clone", "-q", "--bare", u.Work, u.Bare)
	Git(tb, u.Work, "remote", "add", "origin", u.Bare)
	return u
}

// Push commits files in the working clone (an empty content removes a file) and pushes
// main and every tag; it returns the commit's hash.
func (u *Upstream) Push(tb testing.TB, files map[string]string, msg string) string {
	tb.Helper()
	hash := Commit(tb, u.Work, files, msg)
	u.PushRefs(tb)
	return hash
}

// Head is the commit the working clone's branch is at: what was pushed last.
func (u *Upstream) Head(tb testing.TB) string {
	tb.Helper()
	return Git(tb, u.Work, "rev-parse", "HEAD")
}

// PushRefs pushes main and every tag of the working clone, forcing.
func (u *Upstream) PushRefs(tb testing.TB) {
	tb.Helper()
	Git(tb, u.Work, "push", "-q", "--force", "origin", "main")
	Git(tb, u.Work, "push", "-q", "--force", "--tags", "origin")
}

// FileURL is the bare repository as a file:// URL.
func (u *Upstream) FileURL() string { return "file://" + u.Bare }

// ServerOptions say how a Server serves.
type ServerOptions struct {
	// TLS serves https with the test server's own certificate (Server.CABundle).
	TLS bool
	// Username and Password, when set, are required as HTTP basic auth.
	Username, Password string
}

// Server serves an Upstream over git's smart HTTP protocol through the real `git
// http-backend` (as CGI) on loopback, and logs each request as "METHOD path".
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

// Serve starts a Server for u until the test ends. It skips the test when git is not
// installed.
func Serve(tb testing.TB, u *Upstream, opts ServerOptions) *Server {
	tb.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		tb.Skip("git is not installed")
	}
	backend := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + u.Root, "GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
		},
		InheritEnv: []string{"PATH"},
		Stderr:     io.Discard, // "not a git repository" for the tests that ask for one
	}
	s := &Server{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		if opts.Username != "" {
			if user, password, ok := r.BasicAuth(); !ok || user != opts.Username || password != opts.Password {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
		}
		backend.ServeHTTP(w, r)
	})
	if opts.TLS {
		s.Server = httptest.NewTLSServer(handler)
	} else {
		s.Server = httptest.NewServer(handler)
	}
	tb.Cleanup(s.Close)
	return s
}

// RepoURL is the URL of the served repository.
func (s *Server) RepoURL() string { return s.URL + "/project.git" }

// CABundle is the PEM of the server's certificate (with ServerOptions.TLS).
func (s *Server) CABundle() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// TakeRequests returns the requests logged since the last call.
func (s *Server) TakeRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}
