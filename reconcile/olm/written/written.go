package written

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// TTL is how long an object is remembered at most, far longer than a cache lags behind its
// API server: it bounds what is kept of writes whose events the informer missed.
const TTL = 30 * time.Second

// Objects are the objects this process wrote that the cache may not show yet (see the
// package). The zero value is not usable; a nil *Objects remembers nothing and reads through.
// Safe for concurrent use.
type Objects struct {
	scheme *runtime.Scheme
	now    func() time.Time
	// sight are the label selectors of the kinds the cache holds only some objects of: an
	// object a selector does not match is never remembered, since the cache, and so its
	// informer, would never show it — nor its deletion.
	sight map[schema.GroupKind]labels.Selector

	mu sync.Mutex
	// watched are the informers of the kinds Watch was given: only their objects are
	// remembered, since only for them can Get tell whether the cache has taken a write in.
	watched map[schema.GroupKind]synced
	objects map[key]*entry
	writes  int // since the last sweep
	// creating are the creates under way, each closed when its create ended.
	creating map[key]chan struct{}
	// handled is, by watched kind, the newest resourceVersion its event handler has taken
	// in: the informer's cache, which it updates before it calls its handlers, shows
	// everything up to it. The informer's LastSyncResourceVersion runs ahead of its cache: it
	// counts what its reflector received, which the cache takes in a moment later.
	handled map[schema.GroupKind]string
	// progress is closed, and cleared, when a handler takes an event in; a Get waiting for
	// the cache makes it.
	progress chan struct{}
	// handledWait bounds how long a Get waits for the cache (HandledWait; a test shortens it).
	handledWait time.Duration
}

// HandledWait is how long Get waits at most for an informer's cache to take in an event its
// reflector has received: in practice milliseconds, the time it takes the informer to pop it.
const HandledWait = time.Second

// synced is what an informer (client-go's SharedIndexInformer) tells of how far its cache
// is: the resourceVersion of the last event, or list, it has taken in.
type synced interface {
	LastSyncResourceVersion() string
}

type key struct {
	kind            schema.GroupKind
	namespace, name string
}

type entry struct {
	// obj is the object as the API server answered the last write (typed).
	obj client.Object
	// replaced are the versions the writes replaced, which the cache may show instead of obj
	// ("" for a create).
	replaced []string
	at       time.Time
}

// New remembers objects of the kinds scheme knows that the cache shows: byObject is the
// cache's configuration by kind (cache.Options.ByObject), whose label selectors narrow
// what it shows; a kind it does not name is shown whole.
func New(scheme *runtime.Scheme, byObject map[client.Object]cache.ByObject) *Objects {
	o := &Objects{scheme: scheme, now: time.Now, objects: map[key]*entry{}, creating: map[key]chan struct{}{},
		sight: map[schema.GroupKind]labels.Selector{}, watched: map[schema.GroupKind]synced{},
		handled: map[schema.GroupKind]string{}, handledWait: HandledWait}
	for obj, by := range byObject {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			continue
		}
		switch {
		case by.Field != nil && !by.Field.Empty(), len(by.Namespaces) > 0:
			o.sight[gvk.GroupKind()] = labels.Nothing() // not judged here: remember none
		case by.Label != nil:
			o.sight[gvk.GroupKind()] = by.Label
		}
	}
	return o
}

// inSight reports whether the cache shows obj, of kind k, and its informer is watched.
// Called with mu held.
func (o *Objects) inSight(k key, obj client.Object) bool {
	if o.watched[k.kind] == nil {
		return false
	}
	sel, ok := o.sight[k.kind]
	return !ok || sel.Matches(labels.Set(obj.GetLabels()))
}

// Create runs create, the request that creates obj, and remembers obj as it answered —
// unless a create of the same object is under way in this process (another controller, or
// another worker, creating it at the same moment): then it waits for that one to end and
// reports false without running create, and the caller reads the object (Get) instead of
// having its create refused as AlreadyExists.
func (o *Objects) Create(ctx context.Context, obj client.Object, create func() error) (bool, error) {
	if o == nil {
		return true, create()
	}
	k, ok := o.keyOf(obj)
	if !ok {
		return true, create()
	}
	o.mu.Lock()
	if busy, ok := o.creating[k]; ok {
		o.mu.Unlock()
		select {
		case <-busy:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	done := make(chan struct{})
	o.creating[k] = done
	o.mu.Unlock()
	err := create()
	if err == nil {
		o.Wrote(obj, "")
	}
	o.mu.Lock()
	delete(o.creating, k)
	o.mu.Unlock()
	close(done)
	return true, err
}

// Wrote remembers obj as the API server answered a write of it (a create, update or patch);
// replaced is the resourceVersion the write was made from ("" for a create). An
// unstructured obj is kept as its typed kind; a kind the scheme does not know is not kept.
func (o *Objects) Wrote(obj client.Object, replaced string) {
	if o == nil || obj.GetResourceVersion() == "" {
		return
	}
	typed, k, ok := o.typed(obj)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.objects[k]
	if !o.inSight(k, typed) {
		// The cache will not show it (nor its deletion, or a change by someone else): what
		// was remembered of it is of no use any more.
		delete(o.objects, k)
		return
	}
	switch {
	case e == nil:
		e = &entry{replaced: []string{replaced}}
		o.objects[k] = e
	case e.obj.GetResourceVersion() == typed.GetResourceVersion():
		return // nothing was written
	case slices.Contains(e.replaced, typed.GetResourceVersion()), older(typed.GetResourceVersion(), e.obj.GetResourceVersion()):
		return // an older write, told after a newer one
	default:
		e.replaced = append(e.replaced, e.obj.GetResourceVersion(), replaced)
	}
	e.obj, e.at = typed, o.now()
	o.writes++
	if o.writes >= sweepEvery {
		o.sweep()
	}
}

// sweepEvery is how many writes go between two sweeps of what is older than TTL.
const sweepEvery = 256

func (o *Objects) sweep() {
	o.writes = 0
	for k, e := range o.objects {
		if o.now().Sub(e.at) > TTL {
			delete(o.objects, k)
		}
	}
}

// Get reads the object key names into obj from c, the cache, as c would, but returns what
// this process wrote last (within TTL) when the cache does not show it yet: when it shows the
// object missing while its informer has taken in no event as new as the write, or shows a
// version this process's writes replaced, or one older than the last write. When the cache
// shows a newer version, someone else's, that is what Get returns, and what was remembered
// is dropped. When the cache shows the object missing and its informer has received the
// write's event but its cache may not have taken it in yet, Get waits for the cache
// (awaitCache) and reads it again: the object, or its deletion since. So it does when what
// was remembered is dropped while the cache is read: a handler has told the write.
// obj must be a typed object of the kind's Go type (else the cache's answer is returned as
// it is).
func (o *Objects) Get(ctx context.Context, c client.Reader, key client.ObjectKey, obj client.Object) error {
	if o == nil {
		return c.Get(ctx, key, obj)
	}
	gvk, gerr := apiutil.GVKForObject(obj, o.scheme)
	if gerr != nil {
		return c.Get(ctx, key, obj)
	}
	k := keyOf(gvk.GroupKind(), key.Namespace, key.Name)
	remembered := o.remembers(k)
	err := c.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) && o.awaitCache(ctx, k, remembered) {
		err = c.Get(ctx, key, obj)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.objects[k]
	if e == nil {
		return err
	}
	if o.now().Sub(e.at) > TTL {
		delete(o.objects, k)
		return err
	}
	switch {
	case apierrors.IsNotFound(err):
		// Written here and not in the cache yet — unless the informer has taken in events
		// (or a list) as new as the write: then the cache has shown the object and its
		// deletion since, or will in a moment. The informer's event handler (Watch) drops
		// what a deletion ends too, but it may run after the cache shows the deletion, and
		// after a controller the deletion woke has read it.
		if !o.behind(k.kind, e.obj.GetResourceVersion()) {
			delete(o.objects, k)
			return err
		}
	case err != nil:
		return err
	case obj.GetResourceVersion() == e.obj.GetResourceVersion():
		delete(o.objects, k) // the cache shows it
		return nil
	case !slices.Contains(e.replaced, obj.GetResourceVersion()) && !older(obj.GetResourceVersion(), e.obj.GetResourceVersion()):
		delete(o.objects, k) // someone else's write, newer than this process's
		return nil
	}
	src, dst := reflect.ValueOf(e.obj), reflect.ValueOf(obj)
	if src.Type() != dst.Type() {
		return err
	}
	dst.Elem().Set(reflect.ValueOf(e.obj.DeepCopyObject()).Elem())
	return nil
}

// awaitCache waits, up to handledWait, until the cache of k's kind has taken in every event
// up to this process's last write of k, when its informer has received that write's event
// (so that Get no longer answers with what was written) but its handlers have not passed it
// yet (so that the cache may not show it): it reports whether the cache got there, and
// should be read again. It does not wait when nothing of k is remembered, or the informer
// has not received the write's event (Get answers with what was written). remembered is
// whether k was remembered before the cache was read: dropped since, by a handler telling
// the version written or the deletion, the cache has taken it in and is read again.
func (o *Objects) awaitCache(ctx context.Context, k key, remembered bool) bool {
	var timeout <-chan time.Time
	for {
		o.mu.Lock()
		e := o.objects[k]
		if e == nil {
			// Dropped since the cache was read, or while waiting: a handler told the version
			// written, or the deletion.
			o.mu.Unlock()
			return remembered || timeout != nil
		}
		if o.now().Sub(e.at) > TTL || o.behind(k.kind, e.obj.GetResourceVersion()) {
			o.mu.Unlock()
			return false
		}
		if h := o.handled[k.kind]; h != "" && !older(h, e.obj.GetResourceVersion()) {
			o.mu.Unlock()
			return true
		}
		if o.progress == nil {
			o.progress = make(chan struct{})
		}
		progress := o.progress
		o.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(o.handledWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-progress:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// remembers reports whether an object of key k is remembered.
func (o *Objects) remembers(k key) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.objects[k] != nil
}

// behind reports whether the informer of kind has taken in no event as new as version rv:
// its cache cannot show the object at rv, nor anything that followed. Called with mu held.
func (o *Objects) behind(kind schema.GroupKind, rv string) bool {
	inf := o.watched[kind]
	if inf == nil {
		return false
	}
	return older(inf.LastSyncResourceVersion(), rv)
}

// older reports whether version a is older than b (false when they do not compare).
func older(a, b string) bool {
	cmp, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && cmp < 0
}

// Forget drops what is remembered of obj (a write of it was refused: what is remembered may
// be stale).
func (o *Objects) Forget(obj client.Object) {
	if o == nil {
		return
	}
	if k, ok := o.keyOf(obj); ok {
		o.mu.Lock()
		delete(o.objects, k)
		o.mu.Unlock()
	}
}

// Len is how many objects are remembered.
func (o *Objects) Len() int {
	if o == nil {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.objects)
}

// Watch drops what is remembered of an object once the informer of its kind shows the
// version written, or its deletion, for each kind of objs.
func (o *Objects) Watch(ctx context.Context, informers cache.Informers, objs ...client.Object) error {
	for _, obj := range objs {
		inf, err := informers.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("informer of %T: %w", obj, err)
		}
		gvk, err := apiutil.GVKForObject(obj, o.scheme)
		if err != nil {
			return fmt.Errorf("kind of %T: %w", obj, err)
		}
		last, ok := inf.(synced)
		if !ok {
			return fmt.Errorf("informer of %T does not tell its last resourceVersion", obj)
		}
		_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { o.seen(obj, false) },
			UpdateFunc: func(_, obj any) { o.seen(obj, false) },
			DeleteFunc: func(obj any) { o.seen(obj, true) },
		})
		if err != nil {
			return fmt.Errorf("watch %T: %w", obj, err)
		}
		o.mu.Lock()
		o.watched[gvk.GroupKind()] = last
		o.mu.Unlock()
	}
	return nil
}

// seen drops what is remembered of an object the cache now shows at the version written, or
// shows deleted.
func (o *Objects) seen(obj any, deleted bool) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, deleted = tomb.Obj, true
	}
	cobj, ok := obj.(client.Object)
	if !ok {
		return
	}
	k, ok := o.keyOf(cobj)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if rv := cobj.GetResourceVersion(); older(o.handled[k.kind], rv) || o.handled[k.kind] == "" {
		o.handled[k.kind] = rv
	}
	if o.progress != nil {
		close(o.progress)
		o.progress = nil
	}
	if e := o.objects[k]; e != nil && (deleted || e.obj.GetResourceVersion() == cobj.GetResourceVersion()) {
		delete(o.objects, k)
	}
}

// typed returns obj as its scheme's Go type (a copy), and its key.
func (o *Objects) typed(obj client.Object) (client.Object, key, bool) {
	u, isUnstructured := obj.(*unstructured.Unstructured)
	if !isUnstructured {
		k, ok := o.keyOf(obj)
		if !ok {
			return nil, key{}, false
		}
		return obj.DeepCopyObject().(client.Object), k, true
	}
	gvk := u.GroupVersionKind()
	ro, err := o.scheme.New(gvk)
	if err != nil {
		return nil, key{}, false
	}
	typed, ok := ro.(client.Object)
	if !ok || runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed) != nil {
		return nil, key{}, false
	}
	return typed, keyOf(gvk.GroupKind(), u.GetNamespace(), u.GetName()), true
}

func (o *Objects) keyOf(obj client.Object) (key, bool) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if _, isUnstructured := obj.(*unstructured.Unstructured); !isUnstructured || gvk.Empty() {
		var err error
		if gvk, err = apiutil.GVKForObject(obj, o.scheme); err != nil {
			return key{}, false
		}
	}
	return keyOf(gvk.GroupKind(), obj.GetNamespace(), obj.GetName()), true
}

func keyOf(kind schema.GroupKind, namespace, name string) key {
	return key{kind: kind, namespace: namespace, name: name}
}

// Versions remembers, for each object, the resourceVersion of the last write this process
// made of it. A nil *Versions remembers nothing. Safe for concurrent use.
type Versions struct {
	mu   sync.Mutex
	last map[types.NamespacedName]string
}

// Wrote records that a write left key at version rv. A write told after a newer one (two
// controllers' writes of one plan, each recording its own once it returned) is not taken for
// the last; when the versions do not compare, neither is: nothing is remembered of key.
func (v *Versions) Wrote(key types.NamespacedName, rv string) {
	if v == nil || rv == "" {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.last == nil {
		v.last = map[types.NamespacedName]string{}
	}
	if last, ok := v.last[key]; ok {
		cmp, err := resourceversion.CompareResourceVersion(rv, last)
		switch {
		case err != nil:
			delete(v.last, key)
			return
		case cmp < 0:
			return
		}
	}
	v.last[key] = rv
}

// Last reports whether rv is the version the last write of key this process made left.
func (v *Versions) Last(key types.NamespacedName, rv string) bool {
	if v == nil || rv == "" {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.last[key] == rv
}

// Forget drops what is remembered of key (the object is gone).
func (v *Versions) Forget(key types.NamespacedName) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.last, key)
}
