package report

import (
	"slices"
)

// MarkAgainstBase returns a copy of head with each violation's Status set: pre-existing
// when the base has the same violation, new otherwise. Two violations are the same when
// they have the same rule, app and object (API group, kind, namespace, name; the file
// stands in for an object when there is none). Lines are not compared: they move when a
// file is edited above the object. Messages are not required to match either, since a
// message may quote a value the change touched; but where the base has several
// violations of one rule on one object, those with identical messages pair up first. Each
// base violation accounts for at most one head violation, so a second occurrence of a
// violation the base had once is new.
func MarkAgainstBase(head, base []Violation) []Violation {
	unmatched := make(map[violationKey]int, len(base))
	unmatchedExact := make(map[exactKey]int, len(base))
	for _, b := range base {
		k := keyOf(b)
		unmatched[k]++
		unmatchedExact[exactKey{k, b.Message}]++
	}

	out := slices.Clone(head)
	matched := make([]bool, len(out))
	for i, v := range out {
		k := keyOf(v)
		if e := (exactKey{k, v.Message}); unmatchedExact[e] > 0 {
			unmatchedExact[e]--
			unmatched[k]--
			matched[i] = true
		}
	}
	for i, v := range out {
		if matched[i] {
			continue
		}
		if k := keyOf(v); unmatched[k] > 0 {
			unmatched[k]--
			matched[i] = true
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

// violationKey is the identity of a violation across revisions.
type violationKey struct {
	rule, app, object, file string
}

type exactKey struct {
	violationKey
	message string
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
