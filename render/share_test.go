package render

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func sameMap(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestSharerKeepsContent(t *testing.T) {
	objs := func() []map[string]any {
		return []map[string]any{
			{"kind": "ConfigMap", "data": map[string]any{"a": "1"}, "list": []any{int64(1), "x", nil, true}},
			{"kind": "ConfigMap", "data": map[string]any{"a": "1"}, "list": []any{int64(1), "x", nil, true}},
			{"kind": "ConfigMap", "data": map[string]any{"a": int64(1)}, "list": []any{"1", "x", nil, true}},
			{"kind": "Other", "data": map[string]any{"a": "1"}, "n": 1.5, "empty": map[string]any{}, "none": []any{}},
			{"kind": "Other", "data": map[string]any{"a": "1", "b": "1"}, "n": 1.5, "empty": map[string]any{}, "none": []any{}},
		}
	}
	want := objs()
	got := objs()
	s := newSharer()
	for i := range got {
		v, _, ok := s.share(got[i])
		if !ok {
			t.Fatalf("object %d: not shareable", i)
		}
		got[i] = v.(map[string]any)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("content changed (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		what string
		a, b any
		same bool
	}{
		{"equal objects", got[0], got[1], true},
		{"equal data of different objects", got[0]["data"], got[3]["data"], true},
		{"a string and a number", got[0]["data"], got[2]["data"], false},
		{"lists", got[0]["list"], got[1]["list"], true},
		{"lists differing in an item's type", got[0]["list"], got[2]["list"], false},
		{"a map with a key more", got[3]["data"], got[4]["data"], false},
		{"empty maps", got[3]["empty"], got[4]["empty"], true},
	} {
		if sameMap(c.a, c.b) != c.same {
			t.Errorf("%s: shared %t, want %t", c.what, !c.same, c.same)
		}
	}
}

// TestSharerSharesScalars: equal strings and numbers in maps and lists that are not
// shared (each object's own metadata) end up one value on the heap, not one each.
func TestSharerSharesScalars(t *testing.T) {
	s := newSharer()
	var got []map[string]any
	for _, name := range []string{"one", "two"} {
		// Boxed anew for each object, as the decoder boxes them.
		obj := map[string]any{
			"kind":     strings.Clone("ConfigMap"),
			"metadata": map[string]any{"name": name, "namespace": strings.Clone("team")},
			"data":     map[string]any{"n": int64(1000), "f": 2.5},
			"list":     []any{name, strings.Clone("x")},
		}
		v, _, ok := s.share(obj)
		if !ok {
			t.Fatalf("%s: not shareable", name)
		}
		got = append(got, v.(map[string]any))
	}
	a, b := got[0], got[1]
	if sameMap(a["metadata"], b["metadata"]) {
		t.Fatal("different metadata were made one")
	}
	for _, c := range []struct {
		what string
		x, y any
	}{
		{"kind", a["kind"], b["kind"]},
		{"namespace", a["metadata"].(map[string]any)["namespace"], b["metadata"].(map[string]any)["namespace"]},
		{"a list's item", a["list"].([]any)[1], b["list"].([]any)[1]},
	} {
		if c.x != c.y || boxOf(c.x) != boxOf(c.y) {
			t.Errorf("%s: %v and %v are two values, want one", c.what, c.x, c.y)
		}
	}
	if !sameMap(a["data"], b["data"]) {
		t.Error("equal data of the two objects are not shared")
	}
}

// boxOf is where the value an interface holds lives.
func boxOf(v any) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1] }

// TestSharerLeavesForeignValues: a value a rendered object never holds (a typed slice, a
// struct) is not hashed: the map holding it, and those above, stay as they are.
func TestSharerLeavesForeignValues(t *testing.T) {
	s := newSharer()
	first := map[string]any{"a": map[string]any{"x": "1"}, "odd": []string{"y"}}
	second := map[string]any{"a": map[string]any{"x": "1"}, "odd": []string{"y"}}
	for _, m := range []map[string]any{first, second} {
		if _, _, ok := s.share(m); ok {
			t.Errorf("%v: shared", m)
		}
	}
	if sameMap(first, second) {
		t.Error("maps holding foreign values were made one")
	}
}

func TestSameContent(t *testing.T) {
	shared := map[string]any{"x": "1"}
	other := map[string]any{"x": "1"} // equal, but not the shared value
	list := []any{"a"}
	for _, c := range []struct {
		name string
		a, b any
		want bool
	}{
		{"same children", map[string]any{"m": shared, "s": "v"}, map[string]any{"m": shared, "s": "v"}, true},
		{"equal children not shared", map[string]any{"m": shared}, map[string]any{"m": other}, false},
		{"a scalar against a map", map[string]any{"m": "x"}, map[string]any{"m": shared}, false},
		{"a map against a scalar", map[string]any{"m": shared}, map[string]any{"m": "x"}, false},
		{"other key", map[string]any{"a": "1"}, map[string]any{"b": "1"}, false},
		{"int and float", []any{int64(1)}, []any{float64(1)}, false},
		{"same list", []any{list, nil}, []any{list, nil}, true},
		{"list and map", []any{}, map[string]any{}, false},
		{"shorter list", []any{"a", "b"}, []any{"a"}, false},
		{"equal strings", "a", "a", true},
		{"equal numbers", int64(300), int64(300), true},
		{"a string and a number", "1", int64(1), false},
		{"an int and a float", int64(1), float64(1), false},
		{"a scalar and a map", "a", map[string]any{}, false},
	} {
		if got := sameContent(c.a, c.b); got != c.want {
			t.Errorf("%s: sameContent = %t, want %t", c.name, got, c.want)
		}
	}
}

// TestRenderedObjectsShareBases: two apps rendering one base share the base's parts, and
// a change to a deep copy of one object, as reconcile makes, leaves the other alone.
func TestRenderedObjectsShareBases(t *testing.T) {
	fsys, root := memRepo(t, files{
		"olmsync.yaml": `
apps:
- {name: a, path: overlays/a, namespace: a}
- {name: b, path: overlays/b, namespace: b}
`,
		"base/kustomization.yaml": "resources:\n- deploy.yaml\n",
		"base/deploy.yaml": `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: web, image: example/web:1}
`,
		"overlays/a/kustomization.yaml": "namePrefix: a-\nresources:\n- ../../base\n",
		"overlays/b/kustomization.yaml": "namePrefix: b-\nresources:\n- ../../base\n",
	})
	res := renderRepo(t, fsys, root, Options{})
	a, b := appNamed(t, res, "a").Objects[0], appNamed(t, res, "b").Objects[0]
	if a.Name() != "a-web" || b.Name() != "b-web" {
		t.Fatalf("rendered %s and %s", a.Name(), b.Name())
	}
	if !sameMap(a.Manifest.Object["spec"], b.Manifest.Object["spec"]) {
		t.Error("the base's spec is not shared by the two apps")
	}

	before := runtime.DeepCopyJSON(b.Manifest.Object)
	c := a.Manifest.DeepCopy()
	c.SetLabels(map[string]string{"changed": "yes"})
	containers, _, err := unstructured.NestedSlice(c.Object, "spec", "template", "spec", "containers")
	if err != nil || len(containers) != 1 {
		t.Fatalf("containers %v: %v", containers, err)
	}
	// In place, in the copy: what a DeepCopy must allow.
	c.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "other:2"
	if diff := cmp.Diff(before, b.Manifest.Object); diff != "" {
		t.Errorf("changing a copy of a's object changed b's (-before +after):\n%s", diff)
	}
}
