package patcher_test

import (
	"context"
	"slices"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/olm/patcher"
)

// counting counts the patches sent through it, to the object and to its status.
type counting struct {
	client.Client
	patches, statusPatches int
}

func (c *counting) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
	c.patches++
	return c.Client.Patch(ctx, obj, p, opts...)
}

func (c *counting) Status() client.SubResourceWriter { return &countingStatus{c.Client.Status(), c} }

type countingStatus struct {
	client.SubResourceWriter
	c *counting
}

func (s *countingStatus) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	s.c.statusPatches++
	return s.SubResourceWriter.Patch(ctx, obj, p, opts...)
}

func newGroup(t *testing.T, env *testenv.Env) *operatorsv1.OperatorGroup {
	t.Helper()
	ns := olmtest.NewNamespace(t, env, "patcher")
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "og"}}
	olmtest.Create(t, env, og)
	got := &operatorsv1.OperatorGroup{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(og), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func get(t *testing.T, env *testenv.Env, og *operatorsv1.OperatorGroup) *operatorsv1.OperatorGroup {
	t.Helper()
	got := &operatorsv1.OperatorGroup{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(og), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPatchWritesWhatChanged: a finalizer and a status change are written, each to its
// endpoint; a second Patch writes only what changed since the first, under the
// resourceVersion the first returned; a Patch with nothing changed sends nothing.
func TestPatchWritesWhatChanged(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	og := newGroup(t, env)
	c := &counting{Client: env.Client}
	p := patcher.New(og, c)

	if err := p.Patch(ctx, og); err != nil {
		t.Fatal(err)
	}
	if c.patches+c.statusPatches != 0 {
		t.Fatalf("%d patches and %d status patches with nothing changed, want none", c.patches, c.statusPatches)
	}

	og.Finalizers = append(og.Finalizers, "example.com/test")
	now := metav1.Now()
	og.Status.Namespaces, og.Status.LastUpdated = []string{og.Namespace}, &now
	if err := p.Patch(ctx, og); err != nil {
		t.Fatal(err)
	}
	live := get(t, env, og)
	if !slices.Equal(live.Finalizers, []string{"example.com/test"}) || !slices.Equal(live.Status.Namespaces, []string{og.Namespace}) {
		t.Fatalf("finalizers %v, status.namespaces %v; want [example.com/test], [%s]", live.Finalizers, live.Status.Namespaces, og.Namespace)
	}
	if og.ResourceVersion != live.ResourceVersion {
		t.Errorf("resourceVersion %s after the patch, the API server's is %s", og.ResourceVersion, live.ResourceVersion)
	}
	if c.patches != 1 || c.statusPatches != 1 {
		t.Errorf("%d patches and %d status patches, want 1 and 1", c.patches, c.statusPatches)
	}

	og.Status.Namespaces = []string{og.Namespace, "other"}
	if err := p.Patch(ctx, og); err != nil {
		t.Fatalf("second patch: %v", err)
	}
	live = get(t, env, og)
	if !slices.Equal(live.Status.Namespaces, []string{og.Namespace, "other"}) || !slices.Equal(live.Finalizers, []string{"example.com/test"}) {
		t.Errorf("after the second patch: finalizers %v, status.namespaces %v", live.Finalizers, live.Status.Namespaces)
	}
	if c.patches != 1 || c.statusPatches != 2 {
		t.Errorf("%d patches and %d status patches after a status change, want 1 and 2", c.patches, c.statusPatches)
	}

	og.Finalizers = nil
	if err := p.Patch(ctx, og); err != nil {
		t.Fatalf("finalizer removal: %v", err)
	}
	if live = get(t, env, og); len(live.Finalizers) != 0 {
		t.Errorf("finalizers %v after their removal", live.Finalizers)
	}
}

// TestStaleCopyIsRefused: the copy a reconcile read is older than the API server's object,
// which carries a condition the copy does not. The reconcile removes that condition (from
// its copy: no difference) and sets the targets: a plain merge patch would write the
// targets and leave the condition; the patcher's is refused, and the object stays as it was.
func TestStaleCopyIsRefused(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	og := newGroup(t, env)
	stale := og.DeepCopy()

	now := metav1.Now()
	og.Status.LastUpdated = &now
	apimeta.SetStatusCondition(&og.Status.Conditions, metav1.Condition{
		Type: operatorsv1.MultipleOperatorGroupCondition, Status: metav1.ConditionTrue,
		Reason: operatorsv1.MultipleOperatorGroupsReason, Message: "Multiple OperatorGroup found in the same namespace",
	})
	if err := env.Client.Status().Update(ctx, og); err != nil {
		t.Fatal(err)
	}
	written := get(t, env, og)

	p := patcher.New(stale, env.Client)
	apimeta.RemoveStatusCondition(&stale.Status.Conditions, operatorsv1.MultipleOperatorGroupCondition)
	stale.Status.Namespaces, stale.Status.LastUpdated = []string{stale.Namespace}, &now
	err := p.Patch(ctx, stale)
	if !patcher.IsStale(err) {
		t.Fatalf("patch from a stale copy: %v, want a conflict", err)
	}
	live := get(t, env, og)
	if live.ResourceVersion != written.ResourceVersion || len(live.Status.Namespaces) != 0 {
		t.Errorf("the refused patch changed the object: resourceVersion %s (was %s), status.namespaces %v",
			live.ResourceVersion, written.ResourceVersion, live.Status.Namespaces)
	}
}
