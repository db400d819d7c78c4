package olmtest

import (
	"context"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StaleCache is a client whose cache lags behind the API server, as a manager's cache does
// until the watch delivers the latest writes: Get of the object named like Stale, of Stale's
// type, returns a copy of Stale. Everything else goes to Client. A test sets Stale to the
// copy the cache is to hold; nil reads through.
type StaleCache struct {
	client.Client
	Stale client.Object
}

// Get returns a copy of Stale for its key and type, and asks Client for anything else.
func (c *StaleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if c.Stale != nil && key == client.ObjectKeyFromObject(c.Stale) && reflect.TypeOf(obj) == reflect.TypeOf(c.Stale) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(c.Stale.DeepCopyObject()).Elem())
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}
