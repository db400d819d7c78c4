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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/diff"
	"github.com/olmsync/olmsync/render"
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
	// Live reads one object of a Sync's graph from the API server: managed (applied from
	// Git) ones as the Sync applies them, the others as olmsync reads OLM's objects.
	Live func(ctx context.Context, obj *olmsyncv1alpha1.Sync, gvk schema.GroupVersionKind, key types.NamespacedName, managed bool) (*unstructured.Unstructured, error)
	// Desired renders a revision of a Sync's repository that the reconciler fetched, as
	// it renders it (reconcile/diff.Desired).
	Desired func(ctx context.Context, obj *olmsyncv1alpha1.Sync, revision string) ([]*render.Object, error)
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
	// diffs bounds the diffs and renders running at once: each renders a revision, and a
	// diff fetches and dry-runs it too.
	diffs   chan struct{}
	renders renders
	mux     *http.ServeMux
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
	for _, r := range s.routes() {
		s.mux.HandleFunc(r.pattern, s.api(r.handler))
	}
	s.mux.HandleFunc(streamPattern, s.stream)
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("no API endpoint %s %s", r.Method, r.URL.Path)})
	})
	return s, nil
}

type route struct {
	pattern string
	handler func(*request) (any, error)
}

// routes are the JSON API's endpoints.
func (s *Server) routes() []route {
	return []route{
		{"GET /api/v1/whoami", s.whoami},
		{"GET /api/v1/syncs", s.listSyncs},
		{"GET /api/v1/syncs/{namespace}/{name}", s.syncView},
		{"GET /api/v1/syncs/{namespace}/{name}/events", s.events},
		{"GET /api/v1/syncs/{namespace}/{name}/diff", s.diff},
		{"GET /api/v1/syncs/{namespace}/{name}/file", s.file},
		{"GET /api/v1/syncs/{namespace}/{name}/resource", s.resource},
		{"GET /api/v1/syncs/{namespace}/{name}/desired", s.desired},
		{"GET /api/v1/subscriptions/{namespace}/{name}/graph", s.graph},
		{"POST /api/v1/syncs/{namespace}/{name}/reconcile", s.reconcile},
		{"POST /api/v1/syncs/{namespace}/{name}/suspend", s.suspend(true)},
		{"POST /api/v1/syncs/{namespace}/{name}/resume", s.suspend(false)},
		{"POST /api/v1/installplans/{namespace}/{name}/approve", s.approve},
	}
}

const streamPattern = "GET /api/v1/stream"

// Endpoints are the patterns ("METHOD /path/{wildcard}") of every endpoint of the API,
// the stream included: a test that must reach each of them reads them here.
func Endpoints() []string {
	var out []string
	for _, r := range (&Server{}).routes() {
		out = append(out, r.pattern)
	}
	return append(out, streamPattern)
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
		if err := s.hub.watch(ctx, s.opts.Informers, s.opts.Reader, s.opts.Log); err != nil {
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
