package dashboard

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// Change is one event of /api/v1/stream: an object of a kind the dashboard shows was
// added, changed or deleted. It names the object only; the page reads what it shows anew.
// A change of the workloads the graph draws below a CSV (its Deployments, and the
// ReplicaSets and Pods of their namespace) is told as a change of that CSV.
type Change struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// streamedKind is a kind whose changes are streamed, with the resource a caller must be
// allowed to list in the namespace to be told of them.
type streamedKind struct {
	obj      client.Object
	kind     string
	group    string
	resource string
}

// watched are the kinds whose changes are streamed as they are.
var watched = []streamedKind{
	{&olmsyncv1alpha1.Sync{}, olmsyncv1alpha1.SyncKind, olmsyncv1alpha1.GroupName, "syncs"},
	{&operatorsv1alpha1.Subscription{}, operatorsv1alpha1.SubscriptionKind, operatorsv1alpha1.GroupName, "subscriptions"},
	{&operatorsv1alpha1.InstallPlan{}, operatorsv1alpha1.InstallPlanKind, operatorsv1alpha1.GroupName, "installplans"},
	{&operatorsv1alpha1.ClusterServiceVersion{}, operatorsv1alpha1.ClusterServiceVersionKind, operatorsv1alpha1.GroupName, "clusterserviceversions"},
	{&operatorsv1.OperatorGroup{}, operatorsv1.OperatorGroupKind, operatorsv1.GroupName, "operatorgroups"},
	// The graph draws each Subscription's CatalogSource, a global one too.
	{&operatorsv1alpha1.CatalogSource{}, operatorsv1alpha1.CatalogSourceKind, operatorsv1alpha1.GroupName, "catalogsources"},
}

// workloads are the kinds the graph draws below a CSV, whose changes are told as changes
// of the CSVs whose Deployments run in their namespace (csvsOf).
var workloads = []client.Object{&appsv1.Deployment{}, &appsv1.ReplicaSet{}, &corev1.Pod{}}

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
	// watchWorkloads adds the handlers of the workloads' informers; the first stream
	// calls it, once, since those informers hold every ReplicaSet and Pod of the cluster
	// (CacheByObject) and start only when the dashboard is used.
	watchWorkloads     func()
	watchWorkloadsOnce sync.Once
}

func newHub() *hub { return &hub{subs: map[chan Change]struct{}{}} }

// watch adds the hub's event handler to the informer of every watched kind, and readies
// the workloads' handlers for the first stream (r reads their CSVs from the cache; log
// gets the error of a handler that could not be added).
func (h *hub) watch(ctx context.Context, informers cache.Informers, r client.Reader, log logr.Logger) error {
	for _, w := range watched {
		kind := w.kind
		err := h.handle(ctx, informers, w.obj, func(obj client.Object) {
			h.publish(Change{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName()})
		})
		if err != nil {
			return err
		}
	}
	h.watchWorkloads = func() {
		go func() {
			for _, obj := range workloads {
				err := h.handle(ctx, informers, obj, func(obj client.Object) {
					for _, c := range csvsOf(ctx, r, obj) {
						h.publish(c)
					}
				})
				if err != nil {
					log.Error(err, "the stream will not tell the workloads' changes")
					return
				}
			}
		}()
	}
	return nil
}

// handle calls publish with each object of obj's kind added, changed or deleted.
func (h *hub) handle(ctx context.Context, informers cache.Informers, obj client.Object, publish func(client.Object)) error {
	inf, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return fmt.Errorf("watch %T: %w", obj, err)
	}
	call := func(o any) {
		if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		if obj, ok := o.(client.Object); ok {
			publish(obj)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    call,
		UpdateFunc: func(_, o any) { call(o) },
		DeleteFunc: call,
	})
	if err != nil {
		return fmt.Errorf("watch %T: %w", obj, err)
	}
	return nil
}

// csvsOf are the changes a workload's change is told as: the CSV whose Deployment it is
// (OLM's olm.owner labels), or, for a ReplicaSet or a Pod, every CSV with a Deployment in
// its namespace, read from the cache — the namespace rather than the owner chain, since
// a Pod's ReplicaSet may reach the cache after it. Nothing for a namespace OLM runs none in.
func csvsOf(ctx context.Context, r client.Reader, obj client.Object) []Change {
	csv := func(l map[string]string) (Change, bool) {
		name := l[groups.OwnerLabel]
		ok := name != "" && l[groups.OwnerKindLabel] == operatorsv1alpha1.ClusterServiceVersionKind
		return Change{Kind: operatorsv1alpha1.ClusterServiceVersionKind, Namespace: cmp.Or(l[groups.OwnerNamespaceLabel], obj.GetNamespace()), Name: name}, ok
	}
	if _, ok := obj.(*appsv1.Deployment); ok {
		if c, ok := csv(obj.GetLabels()); ok {
			return []Change{c}
		}
		return nil
	}
	var deps appsv1.DeploymentList
	err := r.List(ctx, &deps, client.InNamespace(obj.GetNamespace()),
		client.MatchingLabels{groups.OwnerKindLabel: operatorsv1alpha1.ClusterServiceVersionKind}, client.UnsafeDisableDeepCopy)
	if err != nil {
		return nil
	}
	var out []Change
	for i := range deps.Items {
		if c, ok := csv(deps.Items[i].Labels); ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
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
	if h.watchWorkloads != nil {
		h.watchWorkloadsOnce.Do(h.watchWorkloads)
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
