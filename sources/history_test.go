package sources

import (
	"context"
	"testing"

	"github.com/olmsync/olmsync/internal/gittest"
)

// A branch that moves backwards or to another history is told from one that moves
// forwards, from what the cache holds, and what it cannot tell is Unknown.
func TestCompareRevisions(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a\n"})
	srv := gittest.Serve(t, u, gittest.ServerOptions{})
	req := FetchRequest{URL: srv.RepoURL(), CacheDir: t.TempDir()}
	fetch := func() string {
		t.Helper()
		tree, err := Fetch(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return tree.Revision
	}
	a := fetch()
	u.Push(t, map[string]string{"b.yaml": "b\n"}, "b")
	b := fetch()
	u.Push(t, map[string]string{"c.yaml": "c\n"}, "c")
	c := fetch()
	// Three commits at once: the cache gets the last one alone (depth 1).
	for _, f := range []string{"d", "e", "f"} {
		gittest.Commit(t, u.Work, map[string]string{f + ".yaml": f + "\n"}, f)
	}
	u.PushRefs(t)
	f := fetch()
	// Another history, force-pushed.
	gittest.Git(t, u.Work, "checkout", "-q", "--orphan", "other")
	gittest.Git(t, u.Work, "rm", "-rqf", ".")
	gittest.Commit(t, u.Work, map[string]string{"o.yaml": "o\n"}, "orphan")
	gittest.Git(t, u.Work, "branch", "-f", "main", "other")
	gittest.Git(t, u.Work, "checkout", "-q", "main")
	u.PushRefs(t)
	o := fetch()

	for _, tc := range []struct {
		name, from, to string
		want           Relation
	}{
		{"same commit", c, c, Same},
		{"one commit forwards", a, b, FastForward},
		{"two fetched commits forwards", a, c, FastForward},
		{"back to an older fetched commit", c, a, Backward},
		{"another history, both walked to their roots", c, o, Unrelated},
		{"commits never fetched in between", c, f, Unknown},
		{"back from beyond a shallow boundary", f, c, Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CompareRevisions(context.Background(), req, tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("CompareRevisions(%s, %s) = %s, want %s", tc.from, tc.to, got, tc.want)
			}
		})
	}
	if _, err := CompareRevisions(context.Background(), req, "main", c); err == nil {
		t.Error("a revision that is not a fetched one was related")
	}
}
