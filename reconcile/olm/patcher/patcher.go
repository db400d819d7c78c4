package patcher

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Serial patches one object any number of times in one reconcile: each Patch writes the
// difference from what the previous one wrote (or from the copy read), under the
// resourceVersion that write returned.
type Serial struct {
	client client.Client
	before client.Object
}

// New starts from obj as read (it must carry its resourceVersion).
func New(obj client.Object, c client.Client) *Serial {
	return &Serial{client: c, before: obj.DeepCopyObject().(client.Object)}
}

// Patch writes obj's changes since the last write: metadata and spec to the object, status
// to its status subresource; nothing when nothing changed. Each write is made under obj's
// resourceVersion (a reconcile that wrote the object itself in between sets the one its
// write returned), and only obj's resourceVersion is updated from the API server's answers.
// A copy that is no longer the API server's fails with a Conflict error (IsStale).
func (s *Serial) Patch(ctx context.Context, obj client.Object) error {
	if reflect.DeepEqual(s.before, obj) {
		// What most reconciles end with. Equal values marshal to equal JSON: the diff below
		// would be empty, and costs two marshals of the object (BenchmarkPatchUnchanged).
		return nil
	}
	data, err := client.MergeFromWithOptions(s.before, client.MergeFromWithOptimisticLock{}).Data(obj)
	if err != nil {
		return fmt.Errorf("patch of %s: %w", obj.GetName(), err)
	}
	var main map[string]any
	if err := json.Unmarshal(data, &main); err != nil {
		return fmt.Errorf("patch of %s: %w", obj.GetName(), err)
	}
	status, statusChanged := main["status"]
	delete(main, "status")
	if changed(main) {
		if err := write(obj, main, func(o client.Object, p client.Patch) error { return s.client.Patch(ctx, o, p) }); err != nil {
			return err
		}
	}
	if statusChanged {
		p := map[string]any{"metadata": map[string]any{}, "status": status}
		if err := write(obj, p, func(o client.Object, p client.Patch) error { return s.client.Status().Patch(ctx, o, p) }); err != nil {
			return err
		}
	}
	s.before = obj.DeepCopyObject().(client.Object)
	return nil
}

// write sends p, under obj's current resourceVersion, and takes the resourceVersion of the
// answer into obj. The answer is decoded into a copy: it is the API server's object, which
// lacks what obj changed in the other half (the status, or the metadata).
func write(obj client.Object, p map[string]any, send func(client.Object, client.Patch) error) error {
	meta, _ := p["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		p["metadata"] = meta
	}
	meta["resourceVersion"] = obj.GetResourceVersion()
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	answer := obj.DeepCopyObject().(client.Object)
	if err := send(answer, client.RawPatch(types.MergePatchType, raw)); err != nil {
		return err
	}
	obj.SetResourceVersion(answer.GetResourceVersion())
	return nil
}

// changed reports whether a merge patch says more than the resourceVersion it carries.
func changed(p map[string]any) bool {
	if len(p) > 1 {
		return true
	}
	meta, ok := p["metadata"].(map[string]any)
	return ok && len(meta) > 1
}

// IsStale reports whether err is the API server refusing a patch made from an outdated copy.
func IsStale(err error) bool { return apierrors.IsConflict(err) }
