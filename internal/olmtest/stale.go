package olmtest

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/olmsync/olmsync/internal/testenv"
)

// StaleCache is a client whose cache lags behind the API server, as a manager's cache does
// until the watch delivers the latest writes: Get of the object named like Stale, of Stale's
// type, returns a copy of Stale, and List into a list of the type of one of StaleLists
// returns a copy of that one (whatever the options). Everything else goes to Client. A test
// sets Stale and StaleLists to what the cache is to hold; nil reads through.
type StaleCache struct {
	client.Client
	Stale      client.Object
	StaleLists []client.ObjectList
}

// List returns a copy of the StaleLists entry of list's type, and asks Client otherwise.
func (c *StaleCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	for _, l := range c.StaleLists {
		if reflect.TypeOf(l) == reflect.TypeOf(list) {
			reflect.ValueOf(list).Elem().Set(reflect.ValueOf(l.DeepCopyObject()).Elem())
			return nil
		}
	}
	return c.Client.List(ctx, list, opts...)
}

// Get returns a copy of Stale for its key and type, and asks Client for anything else.
func (c *StaleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if c.Stale != nil && key == client.ObjectKeyFromObject(c.Stale) && reflect.TypeOf(obj) == reflect.TypeOf(c.Stale) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(c.Stale.DeepCopyObject()).Elem())
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// APIReads is a reader straight from the API server (a controller's APIReader) that counts
// the Gets and Lists it passes on, by the type of object read: a test holds a controller to
// reading an object from its cache with it.
type APIReads struct {
	client.Reader
	mu     sync.Mutex
	counts map[reflect.Type]int
}

// Get counts the read and passes it on.
func (r *APIReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.count(obj)
	return r.Reader.Get(ctx, key, obj, opts...)
}

// List counts the read and passes it on.
func (r *APIReads) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.count(list)
	return r.Reader.List(ctx, list, opts...)
}

func (r *APIReads) count(obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[reflect.Type]int{}
	}
	r.counts[reflect.TypeOf(obj)]++
}

// Of is how many reads of obj's type (an object or a list) were passed on.
func (r *APIReads) Of(obj any) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[reflect.TypeOf(obj)]
}

// Calls counts what a controller asks of the API server through a client CountCalls made:
// its writes (creates, updates and patches, of objects and of their subresources) and its
// lists. A test holds a reconcile that should stop at once to none of either.
type Calls struct {
	Writes, Lists atomic.Int32
}

// CountCalls returns a client straight to env's API server that counts, in the Calls it
// returns, the writes and lists made through it.
func CountCalls(tb testing.TB, env *testenv.Env) (client.WithWatch, *Calls) {
	tb.Helper()
	direct, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		tb.Fatal(err)
	}
	calls := &Calls{}
	return interceptor.NewClient(direct, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			calls.Writes.Add(1)
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			calls.Writes.Add(1)
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			calls.Writes.Add(1)
			return c.Patch(ctx, o, p, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			calls.Writes.Add(1)
			return c.SubResource(sub).Update(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			calls.Writes.Add(1)
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
			calls.Lists.Add(1)
			return c.List(ctx, l, opts...)
		},
	}), calls
}
