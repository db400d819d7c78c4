package render

import (
	"hash/maphash"
	"math"
	"math/bits"
	"reflect"
	"sync"
)

// sharer makes the identical parts of a render's objects one value. A repository renders
// the same bases into many apps (one overlay per cluster), so most of its objects' maps
// and lists — a base's containers, selectors, labels, a ConfigMap's data — are equal to
// one already rendered; each is a Go map of ~340 bytes however few its keys. On the
// 300-app benchmark repository 20,318 of the objects' 30,100 maps are such copies, most
// of the memory a check holds longest (issue 18).
//
// What this makes is a contract: a rendered object's Manifest must never be changed in
// place (it never was: a stage must not change the rendered objects, and reconcile
// applies deep copies); a change goes to a DeepCopy, which copies shared parts like any
// other.
type sharer struct {
	seed maphash.Seed
	mu   sync.Mutex
	// seen holds one value per content hash: the first map or list with that content.
	// Another with the same hash but other content (a collision) is left unshared.
	seen map[uint64]any
}

func newSharer() *sharer {
	return &sharer{seed: maphash.MakeSeed(), seen: map[uint64]any{}}
}

// objects replaces each object's content with the shared one, for objects nothing else
// holds yet (just built, decrypted and post-built).
func (s *sharer) objects(objs []*Object) {
	if s == nil {
		return
	}
	for _, o := range objs {
		if v, _, ok := s.share(o.Manifest.Object); ok {
			o.Manifest.Object = v.(map[string]any)
		}
	}
}

// share returns the shared value equal to v, and v's content hash. v's own maps and lists
// are changed to hold shared children, so v must be held by nothing else. ok is false for
// a value holding something a rendered object does not (only what encoding/json decodes:
// maps, lists, strings, int64 and float64 numbers, booleans and null), left as it is.
//
// Strings and numbers are shared too: in a map or list each is a value of its own on the
// heap (what the interface points to), and a repository's objects repeat few of them — the
// 18,527 in the objects' unshared maps and lists on the 300-app benchmark repository are
// 484 values.
func (s *sharer) share(v any) (shared any, hash uint64, ok bool) {
	switch x := v.(type) {
	case map[string]any:
		var sum uint64
		for k, c := range x {
			cv, ch, ok := s.share(c)
			if !ok {
				return v, 0, false
			}
			x[k] = cv
			// Entries are summed: the hash does not depend on the map's order.
			sum += mix(maphash.String(s.seed, k) ^ bits.RotateLeft64(ch, 17))
		}
		return s.canonical(x, mix(sum^tagMap))
	case []any:
		h := uint64(tagList)
		for i, c := range x {
			cv, ch, ok := s.share(c)
			if !ok {
				return v, 0, false
			}
			x[i] = cv
			h = mix(h ^ ch)
		}
		return s.canonical(x, h)
	case string:
		return s.canonical(v, maphash.String(s.seed, x))
	case int64:
		return s.canonical(v, mix(uint64(x)^tagInt))
	case float64:
		return s.canonical(v, mix(math.Float64bits(x)^tagFloat))
	case bool: // Go keeps one true and one false: nothing to share
		if x {
			return v, mix(tagTrue), true
		}
		return v, mix(tagFalse), true
	case nil:
		return nil, mix(tagNull), true
	}
	return v, 0, false
}

// canonical returns the first value seen with hash h when it holds what v holds, else v.
func (s *sharer) canonical(v any, h uint64) (any, uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first, found := s.seen[h]
	switch {
	case !found:
		s.seen[h] = v
	case sameContent(first, v):
		return first, h, true
	}
	return v, h, true
}

// sameContent reports whether two maps (or two lists) whose children are shared values
// hold the same — equal keys, and each child the same value: for maps and lists the very
// same one, since equal children were already made one — or two scalars are equal.
func sameContent(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !sameValue(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	// a is a string or a number, comparable: == cannot panic, whatever b is.
	return a == b
}

// sameValue compares two shared children: maps and lists by identity, scalars by value.
func sameValue(a, b any) bool {
	switch a.(type) {
	case map[string]any, []any:
		ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
		return ra.Kind() == rb.Kind() && ra.Len() == rb.Len() && ra.UnsafePointer() == rb.UnsafePointer()
	}
	switch b.(type) {
	case map[string]any, []any:
		return false
	}
	return a == b
}

// Tags keep values of different kinds with the same bits apart.
const (
	tagMap = 0x9e3779b97f4a7c15 + iota
	tagList
	tagInt
	tagFloat
	tagTrue
	tagFalse
	tagNull
)

// mix is a 64-bit finalizer (splitmix64's): it spreads every input bit over the output.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
