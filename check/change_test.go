package check

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/render"
)

// TestChangeFindsTheHeadWhileTheBaseIsChecked (issue 32): `check --base` opens the head and
// finds its apps while the base is checked — one core's work beside the base's — so the
// head's apps are found (render.Options.Accept is asked about its olmsync.yaml) before the
// head's stages are made from the base's result. Run one after the other, the head would
// be found only after that. The reports are the same either way (TestPRModeOnGitOpsCatalog).
func TestChangeFindsTheHeadWhileTheBaseIsChecked(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Commit(t, dir, trimmed(passingRepo()), "base")
	head := trimmed(passingRepo())
	head["olmsync.yaml"] += "- {name: team-b, path: team-b, namespace: team-b}\n"
	head["team-b/subscription.yaml"] = strings.ReplaceAll(subscriptionEtcd, "etcd", "prometheus")
	gittest.Commit(t, dir, head, "head: team-b")

	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	opts := Options{Render: render.Options{Accept: func(cfg *render.Config) error {
		record("found " + strings.Repeat("+", len(cfg.Apps)-2)) // "found " the base, "found +" the head
		return nil
	}}}
	stages := func(base *Result) []Stage {
		if base != nil {
			record("head's stages")
		}
		return nil
	}
	headRes, baseRes, err := Change(context.Background(), Source{Location: dir, Ref: "HEAD"}, "HEAD~1", opts, stages)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if i, j := slices.Index(events, "found +"), slices.Index(events, "head's stages"); i < 0 || j < 0 || i > j {
		t.Errorf("events %q: the head's apps must be found before its stages are made from the base's result", events)
	}
	if got := []int{len(baseRes.Render.Apps), len(headRes.Render.Apps)}; !cmp.Equal(got, []int{2, 3}) {
		t.Errorf("apps of base and head = %v, want [2 3]", got)
	}
}

// TestChangeErrors: an unknown base is the base's error even though the head was opened
// beside it; an unknown head is the head's, once the base is checked.
func TestChangeErrors(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Commit(t, dir, trimmed(passingRepo()), "first")
	none := func(*Result) []Stage { return nil }
	tests := []struct {
		name       string
		head, base string
		want       []string
	}{
		{"unknown base", "HEAD", "nope", []string{"base revision", "nope"}},
		{"unknown base, head the working tree", "", "nope", []string{"base revision", "nope"}},
		{"unknown head", "nope", "HEAD", []string{"nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Change(context.Background(), Source{Location: dir, Ref: tt.head}, tt.base, Options{}, none)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.head == "nope" && strings.Contains(err.Error(), "base revision") {
				t.Errorf("error %q blames the base for the head", err)
			}
		})
	}
}
