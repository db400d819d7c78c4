package testenv

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Index is a field index of an informer cache, as a controller's SetupWithManager registers
// it on the manager's cache.
type Index struct {
	Object client.Object
	Field  string
	Value  client.IndexerFunc
}

// CachedClient returns a client of the control plane that reads through an informer cache
// holding the given indexes, as a manager's client does — for a test of a reconciler's
// indexed reads without starting a manager. The cache runs until the test ends; an
// informer starts, and syncs, on its kind's first read.
func (e *Env) CachedClient(tb testing.TB, indexes ...Index) client.Client {
	tb.Helper()
	informers, err := cache.New(e.Config, cache.Options{Scheme: e.Scheme})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	for _, ix := range indexes {
		if err := informers.IndexField(ctx, ix.Object, ix.Field, ix.Value); err != nil {
			tb.Fatal(err)
		}
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		tb.Fatal("the cache did not sync")
	}
	c, err := client.New(e.Config, client.Options{Scheme: e.Scheme, Cache: &client.CacheOptions{Reader: informers}})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
