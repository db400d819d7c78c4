package written

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const ns = "ns"

// fakeCache is the manager's cache: what it shows of each object (typed, by kind and key).
type fakeCache struct {
	mu      sync.Mutex
	objects map[string]client.Object
}

func cacheKey(obj client.Object, key client.ObjectKey) string {
	return reflect.TypeOf(obj).String() + "/" + key.String()
}

func (c *fakeCache) show(obj client.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objects[cacheKey(obj, client.ObjectKeyFromObject(obj))] = obj.DeepCopyObject().(client.Object)
}

func (c *fakeCache) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	have, ok := c.objects[cacheKey(obj, key)]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: reflect.TypeOf(obj).Elem().Name()}, key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(have.DeepCopyObject()).Elem())
	return nil
}

func (c *fakeCache) List(context.Context, client.ObjectList, ...client.ListOption) error {
	panic("not used")
}

// fakeInformers hands out one informer for every kind.
type fakeInformers struct {
	cache.Informers
	inf *fakeInformer
}

func (f fakeInformers) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return f.inf, nil
}

// fakeInformer records the event handlers added and tells last as its last resourceVersion.
type fakeInformer struct {
	cache.Informer
	mu       sync.Mutex
	last     string
	handlers []toolscache.ResourceEventHandler
}

func (f *fakeInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	f.handlers = append(f.handlers, h)
	return nil, nil
}

func (f *fakeInformer) LastSyncResourceVersion() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *fakeInformer) took(rv string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = rv
}

type harness struct {
	o     *Objects
	cache *fakeCache
	inf   *fakeInformer
	now   time.Time
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{cache: &fakeCache{objects: map[string]client.Object{}}, inf: &fakeInformer{last: "1"}, now: time.Unix(1000, 0)}
	h.o = New(clientgoscheme.Scheme, map[client.Object]cache.ByObject{
		&rbacv1.Role{}: {Label: labels.SelectorFromSet(labels.Set{"olm.managed": "true"})},
	})
	h.o.now = func() time.Time { return h.now }
	if err := h.o.Watch(context.Background(), fakeInformers{inf: h.inf}, &corev1.ServiceAccount{}, &rbacv1.Role{}); err != nil {
		t.Fatal(err)
	}
	return h
}

// sa is the ServiceAccount "a" at version rv, with secret as its one secret (to tell
// copies apart).
func sa(rv, secret string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a", ResourceVersion: rv},
		Secrets:    []corev1.ObjectReference{{Name: secret}},
	}
}

func role(rv string, lbls map[string]string) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a", ResourceVersion: rv, Labels: lbls}}
}

// create creates obj through o, as the API server would answer it at version rv.
func (h *harness) create(t *testing.T, obj client.Object, rv string) {
	t.Helper()
	ran, err := h.o.Create(context.Background(), obj, func() error { obj.SetResourceVersion(rv); return nil })
	if !ran || err != nil {
		t.Fatalf("Create: ran %v, %v", ran, err)
	}
}

func TestObjects(t *testing.T) {
	managed := map[string]string{"olm.managed": "true"}
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, h *harness)
		// read is what is read of the object (ServiceAccount "a" unless a Role): its
		// resourceVersion and secret, or notFound.
		read       client.Object
		wantRV     string
		wantSecret string
		notFound   bool
		// remembered is how many objects are remembered after the read.
		remembered int
	}{{
		name:   "created, the cache not showing it yet: the written object",
		do:     func(t *testing.T, h *harness) { h.create(t, sa("", "mine"), "5") },
		wantRV: "5", wantSecret: "mine", remembered: 1,
	}, {
		name: "created, the informer past the write, its cache taking it in a moment later: the cache's copy",
		do: func(t *testing.T, h *harness) {
			h.create(t, sa("", "mine"), "5")
			h.inf.took("5") // the reflector received the create's event; the cache has not popped it yet
			go func() {
				time.Sleep(20 * time.Millisecond)
				h.cache.show(sa("5", "cached"))
				h.inf.handlers[0].OnAdd(sa("5", "cached"), false)
			}()
		},
		wantRV: "5", wantSecret: "cached",
	}, {
		name: "created, the informer past the write, its cache past it showing none: missing (deleted since)",
		do: func(t *testing.T, h *harness) {
			h.create(t, sa("", "mine"), "5")
			h.inf.took("7") // the create's event and the deletion's received
			go func() {
				time.Sleep(20 * time.Millisecond)
				other := sa("7", "other")
				other.Name = "b"
				h.inf.handlers[0].OnAdd(other, false) // the handlers past the write; the deletion not told yet
			}()
		},
		notFound: true,
	}, {
		name: "created, the informer past the write, its cache not passing it in time: missing",
		do: func(t *testing.T, h *harness) {
			h.o.handledWait = 10 * time.Millisecond
			h.create(t, sa("", "mine"), "5")
			h.inf.took("7")
		},
		notFound: true,
	}, {
		name: "created, the informer's handler telling the deletion: missing",
		do: func(t *testing.T, h *harness) {
			h.create(t, sa("", "mine"), "5")
			h.inf.handlers[0].OnDelete(sa("5", "mine"))
		},
		notFound: true,
	}, {
		name: "created, the deletion told as a tombstone: missing",
		do: func(t *testing.T, h *harness) {
			h.create(t, sa("", "mine"), "5")
			h.inf.handlers[0].OnDelete(toolscache.DeletedFinalStateUnknown{Key: ns + "/a", Obj: sa("5", "mine")})
		},
		notFound: true,
	}, {
		name: "the informer showing the version written: dropped, the cache's copy",
		do: func(t *testing.T, h *harness) {
			h.create(t, sa("", "mine"), "5")
			h.cache.show(sa("5", "cached"))
			h.inf.handlers[0].OnAdd(sa("5", "cached"), false)
		},
		wantRV: "5", wantSecret: "cached",
	}, {
		name: "the cache at the version the write replaced: the written object",
		do: func(t *testing.T, h *harness) {
			h.cache.show(sa("5", "old"))
			h.o.Wrote(sa("7", "mine"), "5")
		},
		wantRV: "7", wantSecret: "mine", remembered: 1,
	}, {
		name: "the cache at an earlier write's replaced version: the last written",
		do: func(t *testing.T, h *harness) {
			h.cache.show(sa("5", "old"))
			h.o.Wrote(sa("7", "mine"), "5")
			h.o.Wrote(sa("8", "mine again"), "7")
		},
		wantRV: "8", wantSecret: "mine again", remembered: 1,
	}, {
		name: "an older write told after a newer one: the newer",
		do: func(t *testing.T, h *harness) {
			h.cache.show(sa("7", "first"))
			h.o.Wrote(sa("8", "second"), "7")
			h.o.Wrote(sa("7", "first"), "5")
		},
		wantRV: "8", wantSecret: "second", remembered: 1,
	}, {
		name: "an older update told after a newer one from elsewhere: the newer",
		do: func(t *testing.T, h *harness) {
			h.cache.show(sa("5", "old"))
			h.o.Wrote(sa("8", "second"), "6") // after a write of 6 not told yet
			h.o.Wrote(sa("6", "first"), "5")
		},
		wantRV: "8", wantSecret: "second", remembered: 1,
	}, {
		name: "the cache at the version written: the cache's copy, dropped",
		do: func(t *testing.T, h *harness) {
			h.cache.show(sa("7", "cached"))
			h.o.Wrote(sa("7", "mine"), "5")
		},
		wantRV: "7", wantSecret: "cached",
	}, {
		name: "someone else's newer version: it wins and the memory goes",
		do: func(t *testing.T, h *harness) {
			h.cache.show(sa("9", "theirs"))
			h.o.Wrote(sa("7", "mine"), "5")
		},
		wantRV: "9", wantSecret: "theirs",
	}, {
		name: "older than TTL, the cache at the version replaced: the cache's copy",
		do: func(t *testing.T, h *harness) {
			h.cache.show(sa("5", "old"))
			h.o.Wrote(sa("7", "mine"), "5")
			h.now = h.now.Add(TTL + time.Second)
		},
		wantRV: "5", wantSecret: "old",
	}, {
		name: "older than TTL, the cache missing it: missing",
		do: func(t *testing.T, h *harness) {
			h.create(t, sa("", "mine"), "5")
			h.now = h.now.Add(TTL + time.Second)
		},
		notFound: true,
	}, {
		name: "within TTL: the written object",
		do: func(t *testing.T, h *harness) {
			h.create(t, sa("", "mine"), "5")
			h.now = h.now.Add(TTL - time.Second)
		},
		wantRV: "5", wantSecret: "mine", remembered: 1,
	}, {
		name: "a write refused, forgotten: the cache's copy",
		do: func(t *testing.T, h *harness) {
			h.cache.show(sa("5", "old"))
			h.o.Wrote(sa("7", "mine"), "5")
			h.o.Forget(sa("7", "mine"))
		},
		wantRV: "5", wantSecret: "old",
	}, {
		name: "an unstructured write, read typed",
		do: func(t *testing.T, h *harness) {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sa("7", "mine"))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: content}
			u.SetAPIVersion("v1")
			u.SetKind("ServiceAccount")
			h.o.Wrote(u, "")
		},
		wantRV: "7", wantSecret: "mine", remembered: 1,
	}, {
		name:   "a Role the cache's selector shows: the written object",
		do:     func(t *testing.T, h *harness) { h.create(t, role("", managed), "5") },
		read:   &rbacv1.Role{},
		wantRV: "5", remembered: 1,
	}, {
		name:     "a Role out of the cache's sight: not remembered",
		do:       func(t *testing.T, h *harness) { h.create(t, role("", nil), "5") },
		read:     &rbacv1.Role{},
		notFound: true,
	}, {
		name: "a Role relabelled out of the cache's sight: dropped",
		do: func(t *testing.T, h *harness) {
			h.create(t, role("", managed), "5")
			h.o.Wrote(role("6", nil), "5")
		},
		read:     &rbacv1.Role{},
		notFound: true,
	}, {
		name: "a kind not watched: not remembered",
		do: func(t *testing.T, h *harness) {
			h.create(t, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, "5")
		},
		read:     &rbacv1.ClusterRole{},
		notFound: true,
	}, {
		name: "the informer's version not comparable: missing",
		do: func(t *testing.T, h *harness) {
			h.create(t, sa("", "mine"), "5")
			h.inf.took("")
		},
		notFound: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.do(t, h)
			obj := tc.read
			if obj == nil {
				obj = &corev1.ServiceAccount{}
			}
			key := client.ObjectKey{Name: "a"}
			if _, cluster := obj.(*rbacv1.ClusterRole); !cluster {
				key.Namespace = ns
			}
			err := h.o.Get(context.Background(), h.cache, key, obj)
			switch {
			case tc.notFound:
				if !apierrors.IsNotFound(err) {
					t.Fatalf("Get: %v (version %q), want NotFound", err, obj.GetResourceVersion())
				}
			case err != nil:
				t.Fatalf("Get: %v", err)
			default:
				if obj.GetResourceVersion() != tc.wantRV {
					t.Errorf("version %q, want %q", obj.GetResourceVersion(), tc.wantRV)
				}
				if s, ok := obj.(*corev1.ServiceAccount); ok && (len(s.Secrets) != 1 || s.Secrets[0].Name != tc.wantSecret) {
					t.Errorf("secrets %v, want %q", s.Secrets, tc.wantSecret)
				}
			}
			if got := h.o.Len(); got != tc.remembered {
				t.Errorf("remembered %d, want %d", got, tc.remembered)
			}
		})
	}
}

// racingReader is the cache with the informer one step ahead of a read: the first read that
// finds the object missing runs meanwhile (before it answers) the cache taking in the
// create and the informer's handler telling it — the moment between Get's read of the
// cache and its look at what is remembered.
type racingReader struct {
	*fakeCache
	meanwhile func()
	once      sync.Once
}

func (r *racingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.fakeCache.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) {
		r.once.Do(r.meanwhile)
	}
	return err
}

// TestDroppedDuringTheRead: an object this process created, that the cache takes in while
// Get reads it — found missing, then dropped from what is remembered by the informer's
// handler before Get looks — is read again from the cache, not answered missing (which sent
// a controller to create it again, refused as AlreadyExists).
func TestDroppedDuringTheRead(t *testing.T) {
	h := newHarness(t)
	h.create(t, sa("", "mine"), "5")
	r := &racingReader{fakeCache: h.cache, meanwhile: func() {
		h.inf.took("5")
		h.cache.show(sa("5", "cached"))
		h.inf.handlers[0].OnAdd(sa("5", "cached"), false)
	}}
	got := &corev1.ServiceAccount{}
	if err := h.o.Get(context.Background(), r, client.ObjectKey{Namespace: ns, Name: "a"}, got); err != nil {
		t.Fatalf("Get: %v, want the cache's copy", err)
	}
	if got.ResourceVersion != "5" || len(got.Secrets) != 1 || got.Secrets[0].Name != "cached" {
		t.Errorf("read version %q, secrets %v; want the cache's copy at 5", got.ResourceVersion, got.Secrets)
	}
	if n := h.o.Len(); n != 0 {
		t.Errorf("remembered %d, want 0", n)
	}
}

// TestReadIsACopy: what Get returns is the caller's to change.
func TestReadIsACopy(t *testing.T) {
	h := newHarness(t)
	h.create(t, sa("", "mine"), "5")
	var got corev1.ServiceAccount
	if err := h.o.Get(context.Background(), h.cache, client.ObjectKey{Namespace: ns, Name: "a"}, &got); err != nil {
		t.Fatal(err)
	}
	got.Secrets[0].Name = "changed"
	var again corev1.ServiceAccount
	if err := h.o.Get(context.Background(), h.cache, client.ObjectKey{Namespace: ns, Name: "a"}, &again); err != nil {
		t.Fatal(err)
	}
	if again.Secrets[0].Name != "mine" {
		t.Errorf("the memory changed with the copy read: %v", again.Secrets)
	}
}

// TestConcurrentCreates: of creates of one object at the same moment, one runs; the others
// wait for it and report that they did not run, and the object created is read.
func TestConcurrentCreates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refused bool // the create that runs fails
	}{{name: "the create succeeds"}, {name: "the create is refused", refused: true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			var runs atomic.Int32
			release := make(chan struct{})
			started := make(chan struct{})
			first := make(chan error, 1)
			go func() {
				obj := sa("", "first")
				_, err := h.o.Create(context.Background(), obj, func() error {
					runs.Add(1)
					close(started)
					<-release
					if tc.refused {
						return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "serviceaccounts"}, "a")
					}
					obj.SetResourceVersion("5")
					return nil
				})
				first <- err
			}()
			<-started
			const others = 4
			var wg sync.WaitGroup
			ran := make(chan bool, others)
			for range others {
				wg.Go(func() {
					r, err := h.o.Create(context.Background(), sa("", "other"), func() error { runs.Add(1); return nil })
					if err != nil {
						t.Errorf("Create: %v", err)
					}
					ran <- r
				})
			}
			time.Sleep(50 * time.Millisecond) // the others wait
			close(release)
			wg.Wait()
			close(ran)
			for r := range ran {
				if r {
					t.Error("a create ran while another was under way")
				}
			}
			if err := <-first; (err != nil) != tc.refused {
				t.Errorf("the first create: %v", err)
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("%d creates ran, want 1", n)
			}
			var got corev1.ServiceAccount
			err := h.o.Get(context.Background(), h.cache, client.ObjectKey{Namespace: ns, Name: "a"}, &got)
			switch {
			case tc.refused && !apierrors.IsNotFound(err):
				t.Errorf("after a refused create: %v (version %q), want NotFound", err, got.ResourceVersion)
			case !tc.refused && (err != nil || got.ResourceVersion != "5"):
				t.Errorf("after the create: %v, version %q, want 5", err, got.ResourceVersion)
			}
			// Once it ended, a create of the same object runs again.
			r, err := h.o.Create(context.Background(), sa("", "later"), func() error { runs.Add(1); return nil })
			if !r || err != nil || runs.Load() != 2 {
				t.Errorf("a later create: ran %v, %v", r, err)
			}
		})
	}
}

// TestCreateWaitEndsWithContext: a create waiting for another ends with its context.
func TestCreateWaitEndsWithContext(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.o.Create(context.Background(), sa("", "first"), func() error { close(started); <-release; return nil })
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ran, err := h.o.Create(ctx, sa("", "other"), func() error { return nil }); ran || err == nil {
		t.Errorf("ran %v, %v; want the context's error", ran, err)
	}
	close(release)
	<-done
}

// TestNil: a nil *Objects and a nil *Versions remember nothing; reads go through.
func TestNil(t *testing.T) {
	var o *Objects
	c := &fakeCache{objects: map[string]client.Object{}}
	c.show(sa("5", "cached"))
	ran := false
	if r, err := o.Create(context.Background(), sa("", "mine"), func() error { ran = true; return nil }); !r || !ran || err != nil {
		t.Errorf("Create: ran %v/%v, %v", r, ran, err)
	}
	o.Wrote(sa("7", "mine"), "5")
	o.Forget(sa("7", "mine"))
	var got corev1.ServiceAccount
	if err := o.Get(context.Background(), c, client.ObjectKey{Namespace: ns, Name: "a"}, &got); err != nil || got.ResourceVersion != "5" {
		t.Errorf("Get: %v, version %q, want the cache's 5", err, got.ResourceVersion)
	}
	if err := o.Get(context.Background(), c, client.ObjectKey{Namespace: ns, Name: "b"}, &got); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing object: %v", err)
	}
	if o.Len() != 0 {
		t.Error("Len of nil")
	}

	var v *Versions
	k := types.NamespacedName{Namespace: ns, Name: "plan"}
	v.Wrote(k, "5")
	if v.Last(k, "5") {
		t.Error("a nil Versions remembered")
	}
	v.Forget(k)
}

func TestVersions(t *testing.T) {
	k := types.NamespacedName{Namespace: ns, Name: "plan"}
	for _, tc := range []struct {
		name   string
		do     func(v *Versions)
		rv     string
		isLast bool
	}{
		{name: "nothing written", do: func(*Versions) {}, rv: "5"},
		{name: "the version written", do: func(v *Versions) { v.Wrote(k, "5") }, rv: "5", isLast: true},
		{name: "a version before the last", do: func(v *Versions) { v.Wrote(k, "5"); v.Wrote(k, "6") }, rv: "5"},
		{name: "the last of two", do: func(v *Versions) { v.Wrote(k, "5"); v.Wrote(k, "6") }, rv: "6", isLast: true},
		{name: "forgotten", do: func(v *Versions) { v.Wrote(k, "5"); v.Forget(k) }, rv: "5"},
		{name: "an empty version", do: func(v *Versions) { v.Wrote(k, "") }, rv: ""},
		{name: "an older write told after a newer", do: func(v *Versions) { v.Wrote(k, "6"); v.Wrote(k, "5") }, rv: "6", isLast: true},
		{name: "an older write told after a newer, the older", do: func(v *Versions) { v.Wrote(k, "6"); v.Wrote(k, "5") }, rv: "5"},
		{name: "versions that do not compare", do: func(v *Versions) { v.Wrote(k, "6"); v.Wrote(k, "x7") }, rv: "x7"},
		{name: "another plan", do: func(v *Versions) { v.Wrote(types.NamespacedName{Namespace: ns, Name: "other"}, "5") }, rv: "5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &Versions{}
			tc.do(v)
			if got := v.Last(k, tc.rv); got != tc.isLast {
				t.Errorf("Last(%q) = %v, want %v", tc.rv, got, tc.isLast)
			}
		})
	}
}
