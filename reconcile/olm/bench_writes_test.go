package olm_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// managerWrites are the writes a manager made, as counted by its transport (olmtest.Manager):
// by resource (its plural, as olmtest.RequestKind names it), the status writes and the
// writes of the object itself (metadata, rules, spec), each a PUT or PATCH the API server
// accepted, and the Events it posted. writeOnly makes them again without the controllers:
// what the controllers' writes cost the API server, with no read, watch or decision.
type managerWrites struct {
	status, updates map[string]int
	events          int
}

// writesOf counts m's writes: every request minus those the API server refused.
func writesOf(m *olmtest.Manager) managerWrites {
	return countWrites(m.ByRequest.All(), m.Refused.All())
}

// countWrites counts the writes among requests (by olmtest.RequestKind) less those refused
// (by kind and status code, as olmtest.Manager.Refused counts them).
func countWrites(requests, refused map[string]int) managerWrites {
	w := managerWrites{status: map[string]int{}, updates: map[string]int{}}
	for kind, n := range requests {
		for r, k := range refused {
			if strings.HasPrefix(r, kind+" ") {
				n -= k
			}
		}
		method, path, _ := strings.Cut(kind, " ")
		resource, sub, _ := strings.Cut(path, "/")
		switch {
		case method == "POST" && path == "events":
			w.events += n
		case method != "PUT" && method != "PATCH":
		case sub == "status":
			w.status[resource] += n
		case sub == "":
			w.updates[resource] += n
		}
	}
	return w
}

// statusFields names, by kind, a status field a further status write changes (writeOnly
// writes each object's final status first): one the CRD's schema keeps.
var statusFields = map[string]string{
	"ClusterServiceVersion": "message",
	"InstallPlan":           "message",
	"Subscription":          "lastUpdated",
	"OperatorGroup":         "lastUpdated",
}

// furtherWrite is one more write of an object after its create and status: a merge patch
// of its status (status) or of an annotation, each write changing the value (n), so that
// the API server stores it as it stores the controllers' writes (a write that changes
// nothing is not stored). No watch is open while writeOnly runs (the manager has stopped):
// what the API server does for the controllers' watches is not in s-writes-only.
type furtherWrite struct {
	status bool
	n      int
}

func (f furtherWrite) write(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	if !f.status {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"olmsync.dev/bench-write":%q}}}`, strconv.Itoa(f.n))
		return c.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(patch)))
	}
	value := "write " + strconv.Itoa(f.n)
	if field := statusFields[o.GetKind()]; field == "lastUpdated" {
		value = time.Date(2026, 1, 1, 0, 0, f.n, 0, time.UTC).Format(time.RFC3339)
	}
	patch := fmt.Sprintf(`{"status":{%q:%q}}`, statusFields[o.GetKind()], value)
	return c.Status().Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// plan shares the further writes out among objs (the floor's objects; hasStatus says
// which of them writeOnly writes a status of): for each resource, the status writes beyond
// the one per object the floor makes and every update, round-robin over its objects, so
// that each object takes about the manager's writes per object of its kind. It returns the
// writes of each object, in objs' order, and logs what it replays and what it cannot (a
// resource none of whose objects writeOnly writes, such as the packages' CRDs, or a status it
// has no field to change in).
func (w managerWrites) plan(b *testing.B, env *testenv.Env, objs []*unstructured.Unstructured, hasStatus func(int) bool) [][]furtherWrite {
	b.Helper()
	byResource := map[string][]int{}
	for i, o := range objs {
		gvk := o.GroupVersionKind()
		mapping, err := env.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			b.Fatal(err)
		}
		byResource[mapping.Resource.Resource] = append(byResource[mapping.Resource.Resource], i)
	}
	out := make([][]furtherWrite, len(objs))
	var replayed, skipped []string
	share := func(what string, n int, over []int, status bool) {
		if n <= 0 {
			return
		}
		if len(over) == 0 {
			skipped = append(skipped, fmt.Sprintf("%s %d", what, n))
			return
		}
		for k := range n {
			i := over[k%len(over)]
			out[i] = append(out[i], furtherWrite{status: status, n: len(out[i]) + 1})
		}
		replayed = append(replayed, fmt.Sprintf("%s %d", what, n))
	}
	for _, resource := range slices.Sorted(maps.Keys(w.status)) {
		var withStatus []int
		for _, i := range byResource[resource] {
			if hasStatus(i) && statusFields[objs[i].GetKind()] != "" {
				withStatus = append(withStatus, i)
			}
		}
		share(resource+"/status", w.status[resource]-len(withStatus), withStatus, true)
	}
	for _, resource := range slices.Sorted(maps.Keys(w.updates)) {
		share(resource, w.updates[resource], byResource[resource], false)
	}
	replayed = append(replayed, fmt.Sprintf("events %d", w.events))
	b.Logf("replayed beyond the floor: %s; not replayed: %s", strings.Join(replayed, ", "), cmp.Or(strings.Join(skipped, ", "), "nothing"))
	return out
}

// eventsFor makes n Events, round-robin over the namespaces, of the size and shape of a
// CSV's phase Event.
func eventsFor(namespaces []string, n int) []*corev1.Event {
	now := metav1.Now()
	out := make([]*corev1.Event, n)
	for k := range n {
		ns := namespaces[k%len(namespaces)]
		out[k] = &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bench."},
			InvolvedObject: corev1.ObjectReference{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion",
				Namespace: ns, Name: "bench"},
			Reason: "InstallSucceeded", Message: "install strategy completed with no errors", Type: corev1.EventTypeNormal,
			Source: corev1.EventSource{Component: "olmsync"}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		}
	}
	return out
}

func TestCountWrites(t *testing.T) {
	requests := map[string]int{
		"PATCH clusterserviceversions/status": 10,
		"PUT clusterserviceversions/status":   2,
		"PATCH clusterserviceversions":        3,
		"PUT clusterroles":                    7,
		"POST clusterroles":                   4, // creates: the floor makes them
		"POST events":                         5,
		"PATCH events":                        1, // a series: not an Event posted
		"GET roles":                           9,
		"LIST subscriptions":                  8,
		"WATCH installplans":                  1,
		"PUT deployments/scale":               1,
	}
	refused := map[string]int{
		"PATCH clusterserviceversions/status 409": 4,
		"PUT clusterroles 409":                    2,
		"PUT clusterroles 422":                    1,
		"POST events 403":                         1,
		"GET roles 404":                           9,
	}
	got := countWrites(requests, refused)
	want := managerWrites{
		status:  map[string]int{"clusterserviceversions": 8},
		updates: map[string]int{"clusterserviceversions": 3, "clusterroles": 4, "events": 1},
		events:  4,
	}
	if !maps.Equal(got.status, want.status) || !maps.Equal(got.updates, want.updates) || got.events != want.events {
		t.Errorf("countWrites = status %v, updates %v, events %d; want status %v, updates %v, events %d",
			got.status, got.updates, got.events, want.status, want.updates, want.events)
	}
}
