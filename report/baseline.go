package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
)

// MarkAgainstBase returns a copy of head with each violation's Status set: pre-existing
// when the base has the same violation, new otherwise. Violations are reported once per
// source object (MergeFindings), so a violation is one rule on one object, and the base's
// is the same when it is of the same rule and, tried in this order:
//
//  1. the same object (API group, kind, namespace, name; the file stands in for an object
//     when there is none) in an app the two share, with the same message;
//  2. the same object in an app the two share;
//  3. the same object in the same file;
//  4. the same object with the same content (Digest.Full): a folder moved or renamed, so
//     that its apps and files have new names;
//  5. an object of the same kind in the same namespace with the same content but its name
//     (Digest.Nameless): a renamed object.
//
// Lines are never compared: they move when a file is edited above the object. Messages
// need not match, since a message may quote a value the change touched. The API version is
// not compared either, so an OperatorGroup moving from v1alpha2 to v1 stays itself. Each
// base violation accounts for at most one head violation, so a second occurrence of a
// violation the base had once is new.
func MarkAgainstBase(head, base []Violation) []Violation {
	out := slices.Clone(head)
	byRule := map[string][]int{}
	for j, b := range base {
		byRule[b.Rule] = append(byRule[b.Rule], j)
	}
	used := make([]bool, len(base))
	matched := make([]bool, len(out))
	for _, same := range pairings {
		for i, h := range out {
			if matched[i] {
				continue
			}
			for _, j := range byRule[h.Rule] {
				if !used[j] && same(&h, &base[j]) {
					used[j], matched[i] = true, true
					break
				}
			}
		}
	}
	for i := range out {
		out[i].Status = StatusNew
		if matched[i] {
			out[i].Status = StatusPreExisting
		}
	}
	return out
}

// pairings are MarkAgainstBase's tests, in order; both violations are of one rule.
var pairings = []func(h, b *Violation) bool{
	func(h, b *Violation) bool { return sameObject(h, b) && shareApp(h, b) && h.Message == b.Message },
	func(h, b *Violation) bool { return sameObject(h, b) && shareApp(h, b) },
	func(h, b *Violation) bool { return sameObject(h, b) && h.File == b.File },
	func(h, b *Violation) bool {
		return sameObject(h, b) && h.Digest.Full != "" && h.Digest.Full == b.Digest.Full
	},
	func(h, b *Violation) bool {
		return h.Object.Group() == b.Object.Group() && h.Object.Kind == b.Object.Kind && h.Object.Namespace == b.Object.Namespace &&
			h.Digest.Nameless != "" && h.Digest.Nameless == b.Digest.Nameless
	},
}

func sameObject(h, b *Violation) bool { return objectKey(*h) == objectKey(*b) }

// objectKey is what a violation is about: its object, or its file when it names none.
func objectKey(v Violation) string {
	if v.Object.IsZero() {
		return "file|" + v.File
	}
	return v.Object.identity()
}

func shareApp(h, b *Violation) bool {
	hb := b.AppRefs()
	for _, a := range h.AppRefs() {
		for _, c := range hb {
			if a.App == c.App {
				return true
			}
		}
	}
	return false
}

// ObjectDigest is what a violation's object is made of, for telling a moved or renamed
// object from a new one: never written out.
type ObjectDigest struct {
	// Full is the digest of the object without what tools write into it.
	Full string
	// Nameless is Full without metadata.name.
	Nameless string
}

// DigestObject computes the digests of a rendered object (as JSON decodes it).
func DigestObject(obj map[string]any) ObjectDigest {
	if obj == nil {
		return ObjectDigest{}
	}
	clean := withoutToolMetadata(obj)
	d := ObjectDigest{Full: digestJSON(clean)}
	if meta, ok := clean["metadata"].(map[string]any); ok {
		nameless := make(map[string]any, len(meta))
		for k, v := range meta {
			if k != "name" {
				nameless[k] = v
			}
		}
		clean["metadata"] = nameless
	}
	d.Nameless = digestJSON(clean)
	return d
}

// withoutToolMetadata is a shallow copy of obj whose labels and annotations leave out
// what tools write (noisyMetadata: kustomize's origin annotations, kubectl's).
func withoutToolMetadata(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return out
	}
	m := make(map[string]any, len(meta))
	for k, v := range meta {
		m[k] = v
	}
	for _, field := range []string{"labels", "annotations"} {
		values, ok := meta[field].(map[string]any)
		if !ok {
			continue
		}
		kept := map[string]any{}
		for k, v := range values {
			if !slices.ContainsFunc(noisyMetadata, func(p string) bool { return strings.HasPrefix(k, p) }) {
				kept[k] = v
			}
		}
		m[field] = kept
	}
	out["metadata"] = m
	return out
}

func digestJSON(v any) string {
	data, err := json.Marshal(v) // map keys are sorted: the same object, the same bytes
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// violationKey is a violation's identity for the formats that keep one across runs
// (SARIF's fingerprints, JUnit's test cases): rule, first app, and object or file.
type violationKey struct {
	rule, app, object, file string
}

func keyOf(v Violation) violationKey {
	k := violationKey{rule: v.Rule, app: v.App}
	if v.Object.IsZero() {
		k.file = v.File
	} else {
		k.object = v.Object.identity()
	}
	return k
}
