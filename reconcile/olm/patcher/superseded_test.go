package patcher_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/olmsync/olmsync/reconcile/olm/patcher"
)

func TestSuperseded(t *testing.T) {
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	var s patcher.Superseded
	if s.Stale(a, "1") {
		t.Error("stale before any write")
	}
	s.Wrote(a, "1", "1") // nothing written
	if s.Stale(a, "1") {
		t.Error("stale after a write that wrote nothing")
	}
	s.Wrote(a, "1", "3")
	for _, tc := range []struct {
		key   types.NamespacedName
		rv    string
		stale bool
	}{
		{a, "1", true},  // what the write replaced
		{a, "2", true},  // what the write went through (its metadata, before its status)
		{a, "3", false}, // what it wrote
		{a, "4", false}, // someone's newer version
		{a, "", false},
		{b, "1", false}, // another object
	} {
		if got := s.Stale(tc.key, tc.rv); got != tc.stale {
			t.Errorf("Stale(%s, %q) = %t, want %t", tc.key, tc.rv, got, tc.stale)
		}
	}
	s.Wrote(a, "3", "5")
	if !s.Stale(a, "1") || !s.Stale(a, "3") || !s.Stale(a, "4") || s.Stale(a, "5") {
		t.Error("after a second write: want every version before the one it made stale, and that one not")
	}
	s.Forget(a)
	if s.Stale(a, "3") {
		t.Error("stale after Forget")
	}

	// Versions that do not compare (not the API server's decimal numbers): only the one the
	// write replaced is known to be stale.
	s.Wrote(b, "x7", "x9")
	for rv, stale := range map[string]bool{"x7": true, "x8": false, "x9": false} {
		if got := s.Stale(b, rv); got != stale {
			t.Errorf("Stale(%s, %q) = %t, want %t", b, rv, got, stale)
		}
	}
}
