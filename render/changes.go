package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// olmGroup is OLM's API group.
const olmGroup = "operators.coreos.com"

// ChangeType is what a change does to an object.
type ChangeType string

// The change types.
const (
	ChangeAdded    ChangeType = "Added"
	ChangeRemoved  ChangeType = "Removed"
	ChangeModified ChangeType = "Modified"
)

// ObjectKey identifies an object across two renders: cluster, API group (not version: an
// OperatorGroup written as v1alpha2 in one and v1 in the other is the same object), kind,
// effective namespace and name.
type ObjectKey struct {
	Cluster   string `json:"cluster,omitempty"`
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func keyOf(o *Object) ObjectKey {
	return ObjectKey{Cluster: o.Cluster, Group: o.Group(), Kind: o.Kind(), Namespace: o.EffectiveNamespace, Name: o.Name()}
}

func (k ObjectKey) String() string {
	s := k.Kind + " " + k.Name
	if k.Namespace != "" {
		s = k.Kind + " " + k.Namespace + "/" + k.Name
	}
	if k.Cluster != "" {
		s += " in cluster " + k.Cluster
	}
	return s
}

// Change is one OLM object a pull request adds, removes or modifies.
type Change struct {
	Type ChangeType `json:"type"`
	ObjectKey
	// APIVersion, App and Source are the head's; the base's for a removed object.
	APIVersion string `json:"apiVersion"`
	App        string `json:"app"`
	Source     Source `json:"source"`
	// BaseApp is the app the object was in before, when it moved to another app.
	BaseApp string `json:"baseApp,omitempty"`
	// Fields are what changed, the fields that matter to OLM first. For an added (removed)
	// object they are its OLM fields' new (old) values.
	Fields []FieldChange `json:"fields,omitempty"`
}

// FieldChange is one field's old and new value.
type FieldChange struct {
	// Field is the field's path (spec.channel, metadata.annotations["olm.skipRange"]);
	// "global" is the OperatorGroup's derived all-namespaces flag.
	Field string `json:"field"`
	// Label names an OLM field in words (channel, package, target namespaces); empty for
	// other fields.
	Label string `json:"label,omitempty"`
	// Old and New are the values as YAML scalars or compact JSON; empty when absent.
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// ChangeSet is what Changes returns.
type ChangeSet struct {
	Changes []Change `json:"changes"`
	// Incomplete are the IDs of apps that failed to render in the base or the head. Their
	// objects are left out of the comparison: a failed render is not a removal.
	Incomplete []string `json:"incomplete,omitempty"`
}

// Changes lists the OLM objects (Subscription, OperatorGroup, CatalogSource,
// ClusterServiceVersion, InstallPlan) that head adds, removes or modifies relative to base,
// per cluster and app, with the fields that changed. It is pure: it reads the two results
// and changes neither.
func Changes(base, head *Result) *ChangeSet {
	incomplete := map[string]bool{}
	for _, r := range []*Result{base, head} {
		for _, a := range r.Apps {
			if a.Err != nil {
				incomplete[a.ID()] = true
			}
		}
	}
	baseObjs, headObjs := olmObjects(base, incomplete), olmObjects(head, incomplete)
	cs := &ChangeSet{Incomplete: sortedKeys(incomplete)}
	keys := map[ObjectKey]bool{}
	for k := range baseObjs {
		keys[k] = true
	}
	for k := range headObjs {
		keys[k] = true
	}
	for k := range keys {
		for _, pair := range pairObjects(baseObjs[k], headObjs[k]) {
			if c, changed := compareObjects(k, pair[0], pair[1]); changed {
				cs.Changes = append(cs.Changes, c)
			}
		}
	}
	slices.SortFunc(cs.Changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.App, b.App), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Type, b.Type))
	})
	return cs
}

// olmObjects indexes a result's OLM objects by key, skipping incomplete apps.
func olmObjects(r *Result, incomplete map[string]bool) map[ObjectKey][]*Object {
	out := map[ObjectKey][]*Object{}
	for _, a := range r.Apps {
		if incomplete[a.ID()] {
			continue
		}
		for _, o := range a.Objects {
			if o.Group() == olmGroup && olmFields[o.Kind()] != nil {
				k := keyOf(o)
				out[k] = append(out[k], o)
			}
		}
	}
	return out
}

// pairObjects matches the base and head objects of one key. One object per key is the
// normal case; when a render declares the same object twice, copies in the same app are
// paired first, then the rest in order. An unpaired side is nil.
func pairObjects(base, head []*Object) [][2]*Object {
	var pairs [][2]*Object
	used := make([]bool, len(head))
	var unpairedBase []*Object
	for _, b := range base {
		i := slices.IndexFunc(head, func(h *Object) bool { return h.App == b.App })
		for i >= 0 && used[i] {
			next := slices.IndexFunc(head[i+1:], func(h *Object) bool { return h.App == b.App })
			if next < 0 {
				i = -1
				break
			}
			i += 1 + next
		}
		if i < 0 {
			unpairedBase = append(unpairedBase, b)
			continue
		}
		used[i] = true
		pairs = append(pairs, [2]*Object{b, head[i]})
	}
	for i, h := range head {
		if used[i] {
			continue
		}
		if len(unpairedBase) > 0 {
			pairs = append(pairs, [2]*Object{unpairedBase[0], h})
			unpairedBase = unpairedBase[1:]
			continue
		}
		pairs = append(pairs, [2]*Object{nil, h})
	}
	for _, b := range unpairedBase {
		pairs = append(pairs, [2]*Object{b, nil})
	}
	return pairs
}

func compareObjects(k ObjectKey, base, head *Object) (Change, bool) {
	c := Change{ObjectKey: k}
	switch {
	case base == nil:
		c.Type, c.APIVersion, c.App, c.Source = ChangeAdded, head.APIVersion(), head.App, head.Source
		c.Fields = fieldDiff(k.Kind, nil, head.Manifest)
		return c, true
	case head == nil:
		c.Type, c.APIVersion, c.App, c.Source = ChangeRemoved, base.APIVersion(), base.App, base.Source
		c.Fields = fieldDiff(k.Kind, base.Manifest, nil)
		return c, true
	}
	c.Type, c.APIVersion, c.App, c.Source = ChangeModified, head.APIVersion(), head.App, head.Source
	if base.App != head.App {
		c.BaseApp = base.App
	}
	c.Fields = fieldDiff(k.Kind, base.Manifest, head.Manifest)
	return c, len(c.Fields) > 0 || c.BaseApp != ""
}

// olmField is a field that matters to OLM, with its meaning in words.
type olmField struct {
	path  []string
	label string
	// derive computes a field that is not written anywhere (OperatorGroup global-ness).
	derive func(u *unstructured.Unstructured) (any, bool)
}

// olmFields are, per OLM kind, the fields a reviewer needs to see change, in report order.
var olmFields = map[string][]olmField{
	"Subscription": {
		{path: []string{"spec", "name"}, label: "package"},
		{path: []string{"spec", "channel"}, label: "channel"},
		{path: []string{"spec", "source"}, label: "source"},
		{path: []string{"spec", "sourceNamespace"}, label: "source namespace"},
		{path: []string{"spec", "installPlanApproval"}, label: "approval"},
		{path: []string{"spec", "startingCSV"}, label: "starting CSV"},
		{path: []string{"spec", "config"}, label: "config"},
	},
	"OperatorGroup": {
		{path: []string{"spec", "targetNamespaces"}, label: "target namespaces"},
		{path: []string{"spec", "selector"}, label: "namespace selector"},
		{label: "global", derive: operatorGroupGlobal},
		{path: []string{"spec", "serviceAccountName"}, label: "service account"},
		{path: []string{"spec", "staticProvidedAPIs"}, label: "static provided APIs"},
		{path: []string{"spec", "upgradeStrategy"}, label: "upgrade strategy"},
	},
	"CatalogSource": {
		{path: []string{"spec", "sourceType"}, label: "source type"},
		{path: []string{"spec", "image"}, label: "image"},
		{path: []string{"spec", "address"}, label: "address"},
		{path: []string{"spec", "configMap"}, label: "config map"},
		{path: []string{"spec", "priority"}, label: "priority"},
		{path: []string{"spec", "updateStrategy", "registryPoll", "interval"}, label: "poll interval"},
	},
	"ClusterServiceVersion": {
		{path: []string{"spec", "version"}, label: "version"},
		{path: []string{"spec", "replaces"}, label: "replaces"},
		{path: []string{"spec", "skips"}, label: "skips"},
		{path: []string{"metadata", "annotations", "olm.skipRange"}, label: "skip range"},
		{path: []string{"spec", "installModes"}, label: "install modes"},
	},
	"InstallPlan": {
		{path: []string{"spec", "approval"}, label: "approval"},
		{path: []string{"spec", "approved"}, label: "approved"},
		{path: []string{"spec", "clusterServiceVersionNames"}, label: "CSV names"},
	},
}

// operatorGroupGlobal: an OperatorGroup selects all namespaces when it names no target
// namespaces and its selector is absent or empty (OLM's getOperatorGroupTargets).
func operatorGroupGlobal(u *unstructured.Unstructured) (any, bool) {
	if tns, _, _ := unstructured.NestedSlice(u.Object, "spec", "targetNamespaces"); len(tns) > 0 {
		return false, true
	}
	sel, _, _ := unstructured.NestedMap(u.Object, "spec", "selector")
	ml, _, _ := unstructured.NestedMap(sel, "matchLabels")
	me, _, _ := unstructured.NestedSlice(sel, "matchExpressions")
	return len(ml) == 0 && len(me) == 0, true
}

// fieldDiff lists the OLM fields that differ between old and new (either may be nil),
// then every other differing field under spec, metadata.labels and metadata.annotations.
func fieldDiff(kind string, old, new *unstructured.Unstructured) []FieldChange {
	var out []FieldChange
	covered := map[string]bool{}
	for _, f := range olmFields[kind] {
		ov, oOK := f.value(old)
		nv, nOK := f.value(new)
		name := f.name()
		covered[name] = true
		if oOK == nOK && reflect.DeepEqual(ov, nv) {
			continue
		}
		out = append(out, FieldChange{Field: name, Label: f.label, Old: showValue(ov, oOK), New: showValue(nv, nOK)})
	}
	if old == nil || new == nil {
		return out
	}
	for _, root := range [][]string{{"spec"}, {"metadata", "labels"}, {"metadata", "annotations"}} {
		ov, oOK, _ := unstructured.NestedFieldNoCopy(old.Object, root...)
		nv, nOK, _ := unstructured.NestedFieldNoCopy(new.Object, root...)
		out = diffValues(out, root, ov, oOK, nv, nOK, covered)
	}
	return out
}

func (f olmField) value(u *unstructured.Unstructured) (any, bool) {
	if u == nil {
		return nil, false
	}
	if f.derive != nil {
		return f.derive(u)
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, f.path...)
	return v, ok
}

func (f olmField) name() string {
	if f.derive != nil {
		return f.label
	}
	return fieldPath(f.path)
}

// fieldPath writes a path with dots, quoting keys that hold dots or slashes.
func fieldPath(p []string) string {
	var b strings.Builder
	for i, seg := range p {
		if strings.ContainsAny(seg, "./") {
			fmt.Fprintf(&b, "[%q]", seg)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// diffValues walks two values in step: maps key by key, anything else (lists included)
// compared whole. Paths under a covered OLM field are skipped.
func diffValues(out []FieldChange, p []string, ov any, oOK bool, nv any, nOK bool, covered map[string]bool) []FieldChange {
	name := fieldPath(p)
	if covered[name] {
		return out
	}
	om, oIsMap := ov.(map[string]any)
	nm, nIsMap := nv.(map[string]any)
	if oIsMap && nIsMap {
		keys := map[string]bool{}
		for k := range om {
			keys[k] = true
		}
		for k := range nm {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			ovk, ook := om[k]
			nvk, nok := nm[k]
			out = diffValues(out, append(slices.Clone(p), k), ovk, ook, nvk, nok, covered)
		}
		return out
	}
	if oOK == nOK && reflect.DeepEqual(ov, nv) {
		return out
	}
	return append(out, FieldChange{Field: name, Old: showValue(ov, oOK), New: showValue(nv, nOK)})
}

// showValue writes a value for a report: scalars as they are, the rest as compact JSON.
func showValue(v any, ok bool) string {
	if !ok || v == nil {
		return ""
	}
	switch t := v.(type) {
	case string:
		return t
	case bool, int64, float64, int:
		return fmt.Sprint(t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
