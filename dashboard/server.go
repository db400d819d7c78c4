package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/diff"
)

//go:embed ui
var assets embed.FS

// Options configure the dashboard.
type Options struct {
	// Addr is the listen address (olmsync run --dashboard-addr).
	Addr string
	// AnonymousRead lets requests without a token read everything the API shows
	// (--dashboard-anonymous-read); writes always need a token.
	AnonymousRead bool
	// Reader reads from the manager's cache: Syncs and OLM's kinds.
	Reader client.Reader
	// Writer makes the actions' writes and the reviews. It is not fenced by the leader
	// lease: the dashboard runs on every replica, as the webhook receiver does, and its
	// writes only ask (a reconcile, a suspension, an approval).
	Writer client.Client
	// Informers are the manager's cache's, whose event handlers feed /api/v1/stream.
	Informers cache.Informers
	// Catalog returns the catalog the embedded OLM loaded for a CatalogSource; nil when
	// the embedded OLM does not run.
	Catalog func(source types.NamespacedName) (*catalog.Catalog, bool)
	// AppsOf maps a Sync's inventory IDs to its apps (gitsync.Reconciler.AppsOf).
	AppsOf func(types.NamespacedName) map[string]string
	// Diff says what a reconcile of a Sync would change (reconcile/diff.Sync).
	Diff func(ctx context.Context, obj *olmsyncv1alpha1.Sync) (*diff.Report, error)
	// File reads a file of a Sync's repository (relative to spec.path) at a revision it
	// fetched, from the reconciler's git cache.
	File func(ctx context.Context, obj *olmsyncv1alpha1.Sync, revision, file string) ([]byte, error)
	// Log gets every action, with the caller's identity.
	Log logr.Logger
	// Now is the clock of the actions' annotations (time.Now when nil).
	Now func() time.Time
}

// Server is the dashboard: the JSON API, the stream and the embedded frontend.
type Server struct {
	opts Options
	auth *Auth
	hub  *hub
	// diffs bounds the diffs running at once: each fetches, renders and dry-runs a Sync.
	diffs chan struct{}
	mux   *http.ServeMux
}

// maxDiffs is how many diffs run at once; more are answered 429.
const maxDiffs = 2

// New builds the dashboard.
func New(opts Options) (*Server, error) {
	if opts.Reader == nil || opts.Writer == nil {
		return nil, errors.New("dashboard: a reader and a writer are needed")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, auth: &Auth{Client: opts.Writer}, hub: newHub(), diffs: make(chan struct{}, maxDiffs), mux: http.NewServeMux()}
	ui, err := fs.Sub(assets, "ui")
	if err != nil {
		return nil, err
	}
	files := http.FileServerFS(ui)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	})
	s.mux.HandleFunc("GET /api/v1/whoami", s.api(s.whoami))
	s.mux.HandleFunc("GET /api/v1/syncs", s.api(s.listSyncs))
	s.mux.HandleFunc("GET /api/v1/syncs/{namespace}/{name}", s.api(s.syncView))
	s.mux.HandleFunc("GET /api/v1/syncs/{namespace}/{name}/events", s.api(s.events))
	s.mux.HandleFunc("GET /api/v1/syncs/{namespace}/{name}/diff", s.api(s.diff))
	s.mux.HandleFunc("GET /api/v1/syncs/{namespace}/{name}/file", s.api(s.file))
	s.mux.HandleFunc("GET /api/v1/subscriptions/{namespace}/{name}/graph", s.api(s.graph))
	s.mux.HandleFunc("POST /api/v1/syncs/{namespace}/{name}/reconcile", s.api(s.reconcile))
	s.mux.HandleFunc("POST /api/v1/syncs/{namespace}/{name}/suspend", s.api(s.suspend(true)))
	s.mux.HandleFunc("POST /api/v1/syncs/{namespace}/{name}/resume", s.api(s.suspend(false)))
	s.mux.HandleFunc("POST /api/v1/installplans/{namespace}/{name}/approve", s.api(s.approve))
	s.mux.HandleFunc("GET /api/v1/stream", s.stream)
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("no API endpoint %s %s", r.Method, r.URL.Path)})
	})
	return s, nil
}

// ServeHTTP serves the dashboard, with the security headers of every answer.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, 1<<10) // no endpoint reads a body
	s.mux.ServeHTTP(w, r)
}

// NeedLeaderElection: the dashboard runs on every replica; its reads come from the
// replica's cache, and its writes only ask.
func (s *Server) NeedLeaderElection() bool { return false }

// Start feeds the stream from the cache's informers and serves on Addr until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	if s.opts.Informers != nil {
		if err := s.hub.watch(ctx, s.opts.Informers); err != nil {
			return fmt.Errorf("dashboard: %w", err)
		}
	}
	l, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return s.Serve(ctx, l)
}

// Serve serves on l until ctx ends.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	s.opts.Log.Info("dashboard serving", "address", l.Addr().String(), "anonymousRead", s.opts.AnonymousRead)
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// request is one API request: who made it, and how to ask what they may do.
type request struct {
	*http.Request
	s  *Server
	id *Identity
}

// reader authenticates a read: the token's identity, or anonymous when anonymous reads
// are on and no token came.
func (s *Server) reader(r *http.Request) (*request, error) {
	token := bearerToken(r)
	if token == "" && s.opts.AnonymousRead {
		return &request{Request: r, s: s, id: anonymous}, nil
	}
	id, err := s.auth.Authenticate(r.Context(), token)
	if err != nil {
		return nil, err
	}
	return &request{Request: r, s: s, id: id}, nil
}

// may says whether the caller may do what attrs say; anonymous reads may read all.
func (q *request) may(attrs authorizationv1.ResourceAttributes) (bool, error) {
	if q.id == anonymous {
		return attrs.Verb == "get" || attrs.Verb == "list" || attrs.Verb == "watch", nil
	}
	return q.s.auth.Allowed(q.Context(), q.id, attrs)
}

// must fails with 403 unless the caller may do what attrs say.
func (q *request) must(attrs authorizationv1.ResourceAttributes) error {
	ok, err := q.may(attrs)
	if err != nil {
		return err
	}
	if !ok {
		return forbidden(q.id.Username, attrs.Verb, describe(attrs))
	}
	return nil
}

// api turns a handler's answer into JSON, and its error into a status and a message.
func (s *Server) api(h func(*request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var out any
		q, err := s.reader(r)
		if err == nil {
			out, err = h(q)
		}
		if err != nil {
			if statusOf(err) == http.StatusInternalServerError {
				s.opts.Log.Error(err, "dashboard request failed", "path", r.URL.Path)
			}
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
}

func writeError(w http.ResponseWriter, err error) {
	status := statusOf(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		msg = "internal error: " + msg
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="olmsync"`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// Who is the answer of /api/v1/whoami.
type Who struct {
	Username      string `json:"username"`
	Authenticated bool   `json:"authenticated"`
	AnonymousRead bool   `json:"anonymousRead"`
}

func (s *Server) whoami(q *request) (any, error) {
	return Who{Username: q.id.Username, Authenticated: q.id != anonymous, AnonymousRead: s.opts.AnonymousRead}, nil
}
