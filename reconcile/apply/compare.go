package apply

import (
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serverFields are written by the API server on every write; they differ between any two
// reads and say nothing about drift. status is never Git's to set: OLM and the other
// controllers own it.
var serverFields = []string{
	"/metadata/managedFields", "/metadata/resourceVersion", "/metadata/generation",
	"/metadata/creationTimestamp", "/metadata/uid", "/metadata/selfLink", "/status",
}

// driftIgnoreRules are the fields OLM rewrites after whoever set them, as ssa's drift-ignore
// rules (JSON pointers per kind): were Git to set them too, each reconcile would put Git's
// value back and OLM its own, forever OutOfSync. Fields OLM only adds (its labels on
// Subscriptions and Namespaces, status) need no rule: a dry-run apply merges them in, so
// they are on both sides of the comparison.
var driftIgnoreRules = []jsondiff.IgnoreRule{
	// OLM writes the union of the group's operators' APIs here on every sync of the group.
	{Selector: olmKind("OperatorGroup"), Paths: []string{"/metadata/annotations/olm.providedAPIs"}},
	// OLM stamps each CSV, and each copy of it, with the group that placed it.
	{Selector: olmKind("ClusterServiceVersion"), Paths: []string{
		"/metadata/annotations/olm.operatorGroup", "/metadata/annotations/olm.operatorNamespace",
		"/metadata/annotations/olm.targetNamespaces", "/metadata/labels/olm.copiedFrom",
	}},
	// OLM approves a Manual plan by setting spec.approved; a plan in Git is a template.
	{Selector: olmKind("InstallPlan"), Paths: []string{"/spec/approved"}},
}

func olmKind(kind string) *jsondiff.Selector {
	return &jsondiff.Selector{Group: regexp.QuoteMeta(olmGroup), Kind: kind}
}

// ignored are driftIgnoreRules compiled, for Drift.
var ignored = func() jsondiff.CompiledIgnoreRules {
	c, err := jsondiff.CompileIgnoreRules(driftIgnoreRules)
	if err != nil {
		panic(err) // the rules above are constants
	}
	return c
}()

// Drift lists the fields where the object a dry-run apply of Git's object yields differs
// from the live object, as dotted paths, sorted; nil when they match. Server-written
// metadata, status and the fields OLM rewrites (driftIgnoreRules) are left out.
func Drift(live, dryRun *unstructured.Unstructured) []string {
	var out []string
	diffPaths(Normalized(live), Normalized(dryRun), nil, &out)
	slices.Sort(out)
	return out
}

// Normalized is the object as Drift compares it: a copy without the server-written
// metadata, status and the fields OLM rewrites (driftIgnoreRules), so that a rendering of two
// objects shows what Drift counted and nothing else.
func Normalized(obj *unstructured.Unstructured) map[string]any {
	c := obj.DeepCopy()
	for _, p := range serverFields {
		unstructured.RemoveNestedField(c.Object, strings.Split(p[1:], "/")...)
	}
	for sel, paths := range ignored {
		// A JSON round trip, so only for the kinds with rules; a missing path is no error.
		if sel.MatchUnstructured(c) {
			_ = jsondiff.ApplyPatchToUnstructured(c, jsondiff.GenerateRemovePatch(paths...))
		}
	}
	// Removing the last annotation or label leaves an empty map where the other side has none.
	for _, field := range []string{"annotations", "labels"} {
		if m, found, _ := unstructured.NestedMap(c.Object, "metadata", field); found && len(m) == 0 {
			unstructured.RemoveNestedField(c.Object, "metadata", field)
		}
	}
	return c.Object
}

// diffPaths walks two decoded objects side by side; maps are compared key by key, anything
// else (lists included: their merge keys are the schema's business) as a whole.
func diffPaths(a, b any, path []string, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, strings.Join(path, "."))
		}
		return
	}
	for k, av := range am {
		p := append(slices.Clip(path), k)
		bv, ok := bm[k]
		if !ok {
			*out = append(*out, strings.Join(p, "."))
			continue
		}
		diffPaths(av, bv, p, out)
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			*out = append(*out, strings.Join(append(slices.Clip(path), k), "."))
		}
	}
}
