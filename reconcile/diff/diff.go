package diff

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/reconcile/apply"
	"github.com/olmsync/olmsync/reconcile/inventory"
)

// Action is what a reconcile would do with one object.
type Action string

// The actions, in the order a report counts them.
const (
	Created   Action = "created"
	Changed   Action = "changed"
	Pruned    Action = "pruned"
	Gated     Action = "gated"
	Waiting   Action = "waiting"
	Failed    Action = "failed"
	Skipped   Action = "skipped"
	Left      Action = "left"
	Unchanged Action = "unchanged"
)

// Actions are every action, in the order a report counts them.
var Actions = []Action{Created, Changed, Pruned, Gated, Waiting, Failed, Skipped, Left, Unchanged}

// Differs reports whether the action means the cluster is not as Git has it after a
// reconcile, or will not be: everything but unchanged and left (a reconcile would leave
// that object as it is, on purpose).
func (a Action) Differs() bool { return a != Unchanged && a != Left }

// Object is one object of the diff.
type Object struct {
	Action     Action `json:"action"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// App is the app that renders it; empty for an object no longer rendered.
	App string `json:"app,omitempty"`
	// Message says why, for waiting, failed, skipped and left.
	Message string `json:"message,omitempty"`
	// Fields are, for changed, the fields that differ (dotted paths, as apply.Drift
	// lists them).
	Fields []string `json:"fields,omitempty"`
	// Diff is, for changed, a unified diff of the live object's YAML and the dry-run
	// apply's answer, without what Drift leaves out, with Secret values masked.
	Diff string `json:"diff,omitempty"`
	// Changes are, for changed, the same comparison field by field: each field only the
	// apply's answer has (added), only the live object has (removed), or both have with
	// other values (changed), with the values (a Secret's masked).
	Changes []FieldChange `json:"changes,omitempty"`
	// Violations are, for gated, the findings that keep it out.
	Violations []Violation `json:"violations,omitempty"`

	entry inventory.Entry
}

// The kinds of FieldChange.
const (
	FieldAdded   = "added"
	FieldRemoved = "removed"
	FieldChanged = "changed"
)

// FieldChange is one field where the live object and the dry-run apply's answer differ.
type FieldChange struct {
	// Path is the field as a dotted path (a map key with a dot in it is kept whole:
	// metadata.annotations.olm.example.com/x); lists are compared as a whole, as Drift
	// compares them.
	Path string `json:"path"`
	// Change is FieldAdded, FieldRemoved or FieldChanged.
	Change string `json:"change"`
	// Live and After are the values on either side, absent where the field is.
	Live  any `json:"live,omitempty"`
	After any `json:"after,omitempty"`
}

// Violation is a finding that gates an object.
type Violation struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
}

// String names the object as olmsync's messages do: Kind "namespace/name".
func (o *Object) String() string { return o.entry.String() }

// GatedObject is an object the placement rules keep out, with the findings that gate it.
type GatedObject struct {
	Entry      inventory.Entry
	Violations []policy.Violation
}

// Input is what a diff is computed from: what the reconciler's steps would do, each
// found without writing.
type Input struct {
	// Applied is the dry run (apply.Applier.DryRun) of the objects a reconcile applies.
	Applied []apply.ObjectResult
	// Gated are the objects an unwaived error keeps out, in enforce mode.
	Gated []GatedObject
	// Apps maps the inventory ID of each rendered object to its app.
	Apps map[string]string
	// Stale are the inventory entries the revision no longer renders.
	Stale []inventory.Entry
	// Prune is spec.prune.
	Prune bool
	// Refused is why spec.pruneOptions refuses to prune Stale (every object of the Sync,
	// or more than maxDeletions); empty when it allows it.
	Refused string
	// Pruned is the dry-run prune (apply.Applier.DryRunPrune) of Stale, when PruneRuns.
	Pruned []apply.PruneResult
}

// PruneRuns reports whether a reconcile would prune the stale entries: spec.prune is on,
// there are some, and no object would be refused (the reconciler keeps stale entries
// while an apply fails, for a later reconcile).
func (in *Input) PruneRuns() bool {
	return in.Prune && len(in.Stale) > 0 && !in.applyFails() && in.Refused == ""
}

func (in *Input) applyFails() bool {
	for _, o := range in.Applied {
		if o.Action == apply.Failed {
			return true
		}
	}
	return false
}

// Compute classifies every object: the applied ones in the order an apply handles them,
// then the gated ones, then the stale ones in the order a prune handles them. A stale
// entry whose object is already gone is left out: there is nothing to do.
func Compute(in Input) ([]Object, error) {
	out := make([]Object, 0, len(in.Applied)+len(in.Gated)+len(in.Stale))
	for _, r := range in.Applied {
		o := object(r.Entry, in.Apps)
		switch r.Action {
		case apply.Created:
			o.Action = Created
		case apply.Unchanged:
			o.Action = Unchanged
		case apply.Configured:
			o.Action, o.Fields = Changed, r.Drift
			if r.Live != nil && r.DryRun != nil {
				d, err := Unified(r.Live, r.DryRun)
				if err != nil {
					return nil, fmt.Errorf("diff %s: %w", r.Entry, err)
				}
				o.Diff, o.Changes = d, Changes(r.Live, r.DryRun)
			}
		case apply.Waiting:
			o.Action, o.Message = Waiting, short(r.Message, r.Entry)
		case apply.Skipped:
			o.Action, o.Message = Skipped, short(r.Message, r.Entry)
		default:
			o.Action, o.Message = Failed, short(r.Message, r.Entry)
		}
		out = append(out, o)
	}
	for _, g := range in.Gated {
		o := object(g.Entry, in.Apps)
		o.Action = Gated
		for _, v := range g.Violations {
			o.Violations = append(o.Violations, Violation{Rule: v.Rule, Message: v.Message, File: v.File, Line: v.Line})
		}
		out = append(out, o)
	}
	return append(out, stale(in)...), nil
}

// stale classifies the entries the revision no longer renders.
func stale(in Input) []Object {
	var why string
	switch {
	case !in.Prune:
		why = "prune is off (spec.prune: false)"
	case in.applyFails():
		why = "not pruned while an object is refused"
	case in.Refused != "":
		why = in.Refused
	default:
		var out []Object
		for _, r := range in.Pruned {
			o := object(r.Entry, nil)
			switch r.Action {
			case apply.Gone:
				continue
			case apply.Deleted:
				o.Action = Pruned
			case apply.Kept:
				o.Action, o.Message = Left, short(r.Message, r.Entry)
			default:
				o.Action, o.Message = Failed, short(r.Message, r.Entry)
			}
			out = append(out, o)
		}
		return out
	}
	out := make([]Object, 0, len(in.Stale))
	for _, e := range in.Stale {
		o := object(e, nil)
		o.Action, o.Message = Left, why
		out = append(out, o)
	}
	return out
}

func object(e inventory.Entry, apps map[string]string) Object {
	return Object{
		APIVersion: schema.GroupVersion{Group: e.Group, Version: e.Version}.String(),
		Kind:       e.Kind, Namespace: e.Namespace, Name: e.Name,
		App: apps[e.ID()], entry: e,
	}
}

// short is a message of apply's without the object it starts with.
func short(msg string, e inventory.Entry) string {
	name := e.String()
	if rest, ok := strings.CutPrefix(msg, name+": "); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(msg, name+" "); ok {
		return rest
	}
	return msg
}

// Unified is a unified diff of two versions of an object as YAML: the live object and the
// dry-run apply's answer, each as Drift compares them (apply.Normalized), a Secret's
// values masked.
func Unified(live, after *unstructured.Unstructured) (string, error) {
	a, b := compared(live, after)
	ya, err := yaml.Marshal(a)
	if err != nil {
		return "", err
	}
	yb, err := yaml.Marshal(b)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(ya), B: lines(yb),
		FromFile: "live", ToFile: "after apply", Context: 3,
	})
}

// compared are the two sides of a diff as Drift compares them (apply.Normalized), a
// Secret's values masked.
func compared(live, after *unstructured.Unstructured) (a, b map[string]any) {
	a, b = apply.Normalized(live), apply.Normalized(after)
	if live.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Secret"}) {
		MaskSecret(a, b)
	}
	return a, b
}

// Changes lists, sorted by path, the fields where the live object and the dry-run
// apply's answer differ, as Unified shows them (a Secret's values masked).
func Changes(live, after *unstructured.Unstructured) []FieldChange {
	a, b := compared(live, after)
	var out []FieldChange
	changes(a, b, "", &out)
	slices.SortFunc(out, func(x, y FieldChange) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// changes walks two decoded objects as apply's diffPaths does: maps key by key, anything
// else as a whole.
func changes(a, b any, path string, out *[]FieldChange) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, FieldChange{Path: path, Change: FieldChanged, Live: a, After: b})
		}
		return
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	for k, av := range am {
		bv, ok := bm[k]
		if !ok {
			*out = append(*out, FieldChange{Path: join(k), Change: FieldRemoved, Live: av})
			continue
		}
		changes(av, bv, join(k), out)
	}
	for k, bv := range bm {
		if _, ok := am[k]; !ok {
			*out = append(*out, FieldChange{Path: join(k), Change: FieldAdded, After: bv})
		}
	}
}

// lines splits YAML into lines, each with its newline (difflib.SplitLines would add an
// empty last one).
func lines(y []byte) []string {
	return difflib.SplitLines(strings.TrimSuffix(string(y), "\n"))
}

// The masks of a Secret's values: the same on both sides when a value is unchanged, so
// that the diff shows which changed and never what they are.
const (
	Mask       = "***"
	MaskBefore = "*** (before)"
	MaskAfter  = "*** (after)"
)

// lastApplied is kubectl's annotation, which holds a copy of the Secret it applied.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// MaskSecret replaces, in two versions of a Secret (decoded objects), every value of data
// and stringData and kubectl's last-applied annotation with Mask, or with MaskBefore and
// MaskAfter where the two differ.
func MaskSecret(before, after map[string]any) {
	for _, field := range [][]string{{"data"}, {"stringData"}, {"metadata", "annotations"}} {
		bm, am := nestedMap(before, field), nestedMap(after, field)
		keys := map[string]bool{}
		for k := range bm {
			keys[k] = true
		}
		for k := range am {
			keys[k] = true
		}
		for k := range keys {
			if field[0] == "metadata" && k != lastApplied {
				continue
			}
			bv, inBefore := bm[k]
			av, inAfter := am[k]
			switch {
			case inBefore && inAfter && !reflect.DeepEqual(bv, av):
				bm[k], am[k] = MaskBefore, MaskAfter
			default:
				if inBefore {
					bm[k] = Mask
				}
				if inAfter {
					am[k] = Mask
				}
			}
		}
	}
}

// nestedMap is the map at path in obj, itself (not a copy), or nil.
func nestedMap(obj map[string]any, path []string) map[string]any {
	m := obj
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}
