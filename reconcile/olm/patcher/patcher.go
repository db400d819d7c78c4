package patcher

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	main, status, err := diff(s.before, obj)
	if err != nil {
		return fmt.Errorf("patch of %s: %w", obj.GetName(), err)
	}
	if len(main.metadata) > 0 || len(main.members) > 0 {
		if err := s.write(obj, main, func(o client.Object, p client.Patch) error { return s.client.Patch(ctx, o, p) }); err != nil {
			return err
		}
	}
	if status != nil {
		p := patch{members: map[string]json.RawMessage{"status": status}}
		if err := s.write(obj, p, func(o client.Object, p client.Patch) error { return s.client.Status().Patch(ctx, o, p) }); err != nil {
			return err
		}
	}
	s.before = obj.DeepCopyObject().(client.Object)
	return nil
}

// patch is a JSON merge patch of an object taken apart: its metadata's members, which
// write adds the resourceVersion to, and the object's other top-level members.
type patch struct {
	metadata map[string]json.RawMessage
	members  map[string]json.RawMessage
}

// diff is the JSON merge patch (RFC 7386) from before to after, as
// client.MergeFrom(before).Data(after) computes it, split into the status's part and the
// rest, and without metadata.resourceVersion (write sets it). It takes the two objects'
// JSON apart at the top level first and diffs only the members whose JSON differs: a
// status write of a CSV no longer parses its spec — most of a real CSV, tens or hundreds
// of kilobytes — into maps twice (TestDiffIsMergeFrom holds it to MergeFrom's).
func diff(before, after client.Object) (main patch, status json.RawMessage, err error) {
	was, err := members(before)
	if err != nil {
		return patch{}, nil, err
	}
	is, err := members(after)
	if err != nil {
		return patch{}, nil, err
	}
	main.members = map[string]json.RawMessage{}
	for name, value := range is {
		old, ok := was[name]
		switch {
		case ok && bytes.Equal(old, value):
			continue
		case ok && isObject(old) && isObject(value):
			if value, err = jsonpatch.CreateMergePatch(old, value); err != nil {
				return patch{}, nil, fmt.Errorf("%s: %w", name, err)
			}
			if name == "metadata" {
				if err := json.Unmarshal(value, &main.metadata); err != nil {
					return patch{}, nil, err
				}
				delete(main.metadata, "resourceVersion")
				continue
			}
			if string(value) == "{}" {
				continue
			}
		}
		main.members[name] = value
	}
	for name := range was {
		if _, ok := is[name]; !ok {
			main.members[name] = json.RawMessage("null")
		}
	}
	status = main.members["status"]
	delete(main.members, "status")
	return main, status, nil
}

// members is obj's JSON, its top-level members each as written.
func members(obj client.Object) (map[string]json.RawMessage, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func isObject(v json.RawMessage) bool { return len(v) > 0 && v[0] == '{' }

// write sends p under obj's current resourceVersion, and takes the resourceVersion of the
// answer into obj. The answer is asked for as the object's metadata alone
// (PartialObjectMetadata, in protobuf): the resourceVersion is all that is read of it, and
// the whole object, a CSV's spec included, would be encoded by the API server and decoded
// here for each write.
func (s *Serial) write(obj client.Object, p patch, send func(client.Object, client.Patch) error) error {
	rv, err := json.Marshal(obj.GetResourceVersion())
	if err != nil {
		return err
	}
	meta := maps.Clone(p.metadata)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta["resourceVersion"] = rv
	body := maps.Clone(p.members)
	if body == nil {
		body = map[string]json.RawMessage{}
	}
	if body["metadata"], err = json.Marshal(meta); err != nil {
		return err
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	gvk, err := s.client.GroupVersionKindFor(obj)
	if err != nil {
		return err
	}
	answer := &metav1.PartialObjectMetadata{}
	answer.SetGroupVersionKind(gvk)
	answer.SetNamespace(obj.GetNamespace())
	answer.SetName(obj.GetName())
	if err := send(answer, client.RawPatch(types.MergePatchType, raw)); err != nil {
		return err
	}
	obj.SetResourceVersion(answer.GetResourceVersion())
	return nil
}

// IsStale reports whether err is the API server refusing a patch made from an outdated copy.
func IsStale(err error) bool { return apierrors.IsConflict(err) }
