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
		{a, "3", false}, // what it wrote
		{a, "2", false}, // not known to be older: the write's refusal tells
		{a, "", false},
		{b, "1", false}, // another object
	} {
		if got := s.Stale(tc.key, tc.rv); got != tc.stale {
			t.Errorf("Stale(%s, %q) = %t, want %t", tc.key, tc.rv, got, tc.stale)
		}
	}
	s.Wrote(a, "3", "5")
	if s.Stale(a, "1") || !s.Stale(a, "3") {
		t.Error("after a second write: want only the version it replaced stale")
	}
	s.Forget(a)
	if s.Stale(a, "3") {
		t.Error("stale after Forget")
	}
}
