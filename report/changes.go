package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/olmsync/olmsync/api/operators"
)

// Manifest is one rendered object and where it came from: what DiffObjects compares.
type Manifest struct {
	Cluster string
	App     string
	File    string
	Line    int
	// Namespace is the namespace the object lands in: metadata.namespace, or the app's
	// destination namespace when the manifest has none; empty for a cluster-scoped
	// object. When empty, metadata.namespace is used. An object is identified by where it
	// lands, so changing an app's destination namespace removes its objects from one
	// namespace and adds them to another.
	Namespace string
	// Object is the object's content as JSON decodes it (unstructured.Unstructured's
	// Object field).
	Object map[string]any
}

// maxFieldValue bounds a value shown in a FieldChange. A longer one (a CSV's deployments,
// its description, an icon) is reported as changed without its values: a reviewer needs
// to know it changed, not to read it in a PR comment.
const maxFieldValue = 256

// noisyMetadata are prefixes of labels and annotations that tools write and reviewers do
// not care about (kustomize's origin annotations, kubectl's last applied configuration).
var noisyMetadata = []string{
	"config.kubernetes.io/",
	"internal.config.kubernetes.io/",
	"kustomize.config.k8s.io/",
	"kubectl.kubernetes.io/last-applied-configuration",
}

// DiffObjects lists the OLM objects (API group operators.coreos.com) that head adds,
// removes or modifies compared with base. Objects are matched per cluster by API group,
// kind, namespace and name, so an object that moves to another file or app, or to another
// version of its API, is modified rather than removed and added. A modified object lists
// the fields of its spec, labels and annotations that differ, and "app" when it moved to
// another app; an added or removed object lists the fields of its spec. Other kinds are
// ignored. The result is in no particular order; Complete sorts it.
func DiffObjects(base, head []Manifest) []Change {
	baseByKey := indexOLM(base)
	headByKey := indexOLM(head)
	var changes []Change
	for _, key := range unionKeys(baseByKey, headByKey) {
		b, h := baseByKey[key], headByKey[key]
		for i := range max(len(b), len(h)) {
			switch {
			case i >= len(b):
				changes = append(changes, added(h[i]))
			case i >= len(h):
				changes = append(changes, removed(b[i]))
			default:
				if c, ok := modified(b[i], h[i]); ok {
					changes = append(changes, c)
				}
			}
		}
	}
	return changes
}

// indexOLM groups the OLM objects by cluster and identity. An identity given twice in
// one cluster (a mistake other rules report) pairs up in file order.
func indexOLM(ms []Manifest) map[string][]Manifest {
	idx := map[string][]Manifest{}
	for _, m := range ms {
		ref := m.ref()
		if ref.Group() != operators.GroupName {
			continue
		}
		key := m.Cluster + "|" + ref.identity()
		idx[key] = append(idx[key], m)
	}
	for _, list := range idx {
		slices.SortStableFunc(list, func(a, b Manifest) int {
			return cmp.Or(cmp.Compare(a.App, b.App), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
		})
	}
	return idx
}

func unionKeys(a, b map[string][]Manifest) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func added(h Manifest) Change {
	c := changeAt(ChangeAdded, h)
	for _, f := range flattenObject(h.Object, false) {
		if len(f.value) <= maxFieldValue {
			c.Fields = append(c.Fields, FieldChange{Path: f.path, New: f.value})
		}
	}
	return c
}

func removed(b Manifest) Change {
	c := changeAt(ChangeRemoved, b)
	for _, f := range flattenObject(b.Object, false) {
		if len(f.value) <= maxFieldValue {
			c.Fields = append(c.Fields, FieldChange{Path: f.path, Old: f.value})
		}
	}
	return c
}

// modified compares one object in both revisions; ok is false when nothing a reviewer
// cares about differs.
func modified(b, h Manifest) (Change, bool) {
	c := changeAt(ChangeModified, h)
	if b.App != h.App {
		c.Fields = append(c.Fields, FieldChange{Path: "app", Old: b.App, New: h.App})
	}
	c.Fields = append(c.Fields, diffFields(flattenObject(b.Object, true), flattenObject(h.Object, true))...)
	return c, len(c.Fields) > 0
}

func changeAt(t ChangeType, m Manifest) Change {
	return Change{Type: t, Object: m.ref(), App: m.App, Cluster: m.Cluster, File: m.File, Line: m.Line}
}

// diffFields compares two flattened objects, both in path order.
func diffFields(old, cur []field) []FieldChange {
	oldByPath := make(map[string]string, len(old))
	for _, f := range old {
		oldByPath[f.path] = f.value
	}
	curByPath := make(map[string]string, len(cur))
	for _, f := range cur {
		curByPath[f.path] = f.value
	}
	paths := make([]string, 0, len(old)+len(cur))
	for _, f := range old {
		paths = append(paths, f.path)
	}
	for _, f := range cur {
		if _, ok := oldByPath[f.path]; !ok {
			paths = append(paths, f.path)
		}
	}
	slices.SortFunc(paths, comparePaths)

	var out []FieldChange
	for _, p := range paths {
		o, n := oldByPath[p], curByPath[p]
		if o == n {
			continue
		}
		if len(o) > maxFieldValue || len(n) > maxFieldValue {
			out = append(out, FieldChange{Path: p, Omitted: true})
			continue
		}
		out = append(out, FieldChange{Path: p, Old: o, New: n})
	}
	return out
}

// field is one leaf of an object: a scalar, or a list shown whole.
type field struct {
	path, value string
}

// flattenObject lists the leaves of an object's spec and, with metadata set, of its
// labels and annotations, in path order: spec first.
func flattenObject(obj map[string]any, metadata bool) []field {
	var out []field
	if spec, ok := obj["spec"]; ok {
		flatten(spec, "spec", &out)
	}
	if metadata {
		meta, _ := obj["metadata"].(map[string]any)
		for _, key := range []string{"labels", "annotations"} {
			entries, _ := meta[key].(map[string]any)
			for name, v := range entries {
				if !isNoisy(name) {
					flatten(v, "metadata."+key+segment(name), &out)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b field) int { return comparePaths(a.path, b.path) })
	return out
}

// flatten walks a decoded JSON value. Maps are walked; a list of scalars becomes one
// leaf "[a, b]", any other list one leaf of compact JSON; empty maps and lists and nulls
// are left out, so `selector: {}` and no selector compare equal.
func flatten(v any, path string, out *[]field) {
	switch v := v.(type) {
	case nil:
	case map[string]any:
		for k, child := range v {
			flatten(child, path+segment(k), out)
		}
	case []any:
		if len(v) == 0 {
			return
		}
		*out = append(*out, field{path, listValue(v)})
	default:
		*out = append(*out, field{path, scalarValue(v)})
	}
}

func listValue(list []any) string {
	items := make([]string, 0, len(list))
	for _, item := range list {
		switch item.(type) {
		case map[string]any, []any:
			return compactJSON(list)
		}
		items = append(items, scalarValue(item))
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func scalarValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return compactJSON(v)
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Values decoded from JSON always marshal; keep something readable if not.
		return fmt.Sprint(v)
	}
	return string(b)
}

// segment is how a map key extends a path: ".channel", or `["olm.skipRange"]` for a key
// a dot would make ambiguous (anything but letters, digits, '-' and '_').
func segment(key string) string {
	if key != "" && !strings.ContainsFunc(key, needsQuoting) {
		return "." + key
	}
	return "[" + strconv.Quote(key) + "]"
}

func needsQuoting(c rune) bool {
	plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	return !plain
}

// comparePaths orders spec fields before metadata, then by path.
func comparePaths(a, b string) int {
	rank := func(p string) int {
		switch {
		case p == "app":
			return 0
		case strings.HasPrefix(p, "spec"):
			return 1
		default:
			return 2
		}
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
}

func isNoisy(name string) bool {
	for _, prefix := range noisyMetadata {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// ref is the manifest's object reference, in the namespace it lands in.
func (m Manifest) ref() ObjectRef {
	ref := refOf(m.Object)
	if m.Namespace != "" {
		ref.Namespace = m.Namespace
	}
	return ref
}

// refOf reads an object's reference from its content.
func refOf(obj map[string]any) ObjectRef {
	str := func(m map[string]any, key string) string {
		s, _ := m[key].(string)
		return s
	}
	meta, _ := obj["metadata"].(map[string]any)
	return ObjectRef{
		APIVersion: str(obj, "apiVersion"),
		Kind:       str(obj, "kind"),
		Namespace:  str(meta, "namespace"),
		Name:       str(meta, "name"),
	}
}
