package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// Change is one event of /api/v1/stream: an object of a kind the dashboard shows was
// added, changed or deleted. It names the object only; the page reads what it shows anew.
type Change struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// watched are the kinds whose changes are streamed, with the resource a caller must be
// allowed to list in the namespace to be told of them.
var watched = []struct {
	obj      client.Object
	kind     string
	group    string
	resource string
}{
	{&olmsyncv1alpha1.Sync{}, olmsyncv1alpha1.SyncKind, olmsyncv1alpha1.GroupName, "syncs"},
	{&operatorsv1alpha1.Subscription{}, operatorsv1alpha1.SubscriptionKind, operatorsv1alpha1.GroupName, "subscriptions"},
	{&operatorsv1alpha1.InstallPlan{}, operatorsv1alpha1.InstallPlanKind, operatorsv1alpha1.GroupName, "installplans"},
	{&operatorsv1alpha1.ClusterServiceVersion{}, operatorsv1alpha1.ClusterServiceVersionKind, operatorsv1alpha1.GroupName, "clusterserviceversions"},
	{&operatorsv1.OperatorGroup{}, operatorsv1.OperatorGroupKind, operatorsv1.GroupName, "operatorgroups"},
	// The graph draws each Subscription's CatalogSource, a global one too.
	{&operatorsv1alpha1.CatalogSource{}, operatorsv1alpha1.CatalogSourceKind, operatorsv1alpha1.GroupName, "catalogsources"},
}

// maxStreams bounds the streams open at once; more are answered 503.
const maxStreams = 256

// streamBuffer is how many changes a slow stream may fall behind before it is told to
// read everything again ("resync") instead.
const streamBuffer = 256

// hub fans the informers' events out to every open stream: one event handler per kind
// for all browsers, so that no browser costs a request to the API server.
type hub struct {
	mu   sync.Mutex
	subs map[chan Change]struct{}
}

func newHub() *hub { return &hub{subs: map[chan Change]struct{}{}} }

// watch adds the hub's event handler to the informer of every watched kind.
func (h *hub) watch(ctx context.Context, informers cache.Informers) error {
	for _, w := range watched {
		inf, err := informers.GetInformer(ctx, w.obj)
		if err != nil {
			return fmt.Errorf("watch %s: %w", w.kind, err)
		}
		kind := w.kind
		publish := func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if obj, ok := o.(client.Object); ok {
				h.publish(Change{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName()})
			}
		}
		_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    publish,
			UpdateFunc: func(_, o any) { publish(o) },
			DeleteFunc: publish,
		})
		if err != nil {
			return fmt.Errorf("watch %s: %w", w.kind, err)
		}
	}
	return nil
}

func (h *hub) publish(c Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- c:
		default: // full: the stream is told to resync when it catches up
		}
	}
}

// subscribe opens a stream of changes; nil when maxStreams are open.
func (h *hub) subscribe() chan Change {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) >= maxStreams {
		return nil
	}
	ch := make(chan Change, streamBuffer)
	h.subs[ch] = struct{}{}
	return ch
}

func (h *hub) unsubscribe(ch chan Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
}

// heartbeat keeps proxies from closing an idle stream.
const heartbeat = 15 * time.Second

// stream serves /api/v1/stream as server-sent events: "change" events naming an object,
// for the kinds and namespaces the caller may list, and "resync" when it fell behind.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	q, err := s.reader(r)
	if err != nil {
		writeError(w, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, fmt.Errorf("streaming is not supported by this connection"))
		return
	}
	ch := s.hub.subscribe()
	if ch == nil {
		writeError(w, &Error{Status: http.StatusServiceUnavailable, Message: fmt.Sprintf("%d streams are open; try again later", maxStreams)})
		return
	}
	defer s.hub.unsubscribe(ch)
	// The read deadline of the server would end the stream: it has no body to read.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": olmsync dashboard stream\n\n")
	flusher.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	allowed := map[string]bool{}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			// A token that expired or was revoked ends the stream; rights are asked anew.
			if _, err := s.reader(r); err != nil {
				fmt.Fprint(w, "event: unauthorized\ndata: {}\n\n")
				flusher.Flush()
				return
			}
			clear(allowed)
			fmt.Fprint(w, ": heartbeat\n\n")
		case c := <-ch:
			if !s.streamAllowed(q, c, allowed) {
				continue
			}
			data, _ := json.Marshal(c)
			fmt.Fprintf(w, "event: change\ndata: %s\n\n", data)
			if len(ch) == cap(ch) {
				fmt.Fprint(w, "event: resync\ndata: {}\n\n")
			}
		}
		flusher.Flush()
	}
}

// streamAllowed says whether the caller may be told of a change: they may list its kind
// in its namespace. Answers are kept for the stream's life in allowed (and the reviews
// are cached besides).
func (s *Server) streamAllowed(q *request, c Change, allowed map[string]bool) bool {
	key := c.Kind + "/" + c.Namespace
	if ok, seen := allowed[key]; seen {
		return ok
	}
	for _, w := range watched {
		if w.kind == c.Kind {
			ok, err := q.may(authorizationv1.ResourceAttributes{Verb: "list", Group: w.group, Resource: w.resource, Namespace: c.Namespace})
			ok = ok && err == nil
			if err == nil {
				allowed[key] = ok
			}
			return ok
		}
	}
	return false
}
