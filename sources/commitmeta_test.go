package sources

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/olmsync/olmsync/internal/gittest"
)

// TestTreeCommitMeta: a fetched revision and a committed revision of a local repository
// carry their commit's subject (the first line only, bounded) and author's name and date,
// for status.lastAppliedCommit.
func TestTreeCommitMeta(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes: cut on a rune boundary at most 256
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a: 1\n"})
	u.Push(t, map[string]string{"a.yaml": "a: 2\n"}, "\n\nraise a to 2\n\nbecause the operator needs it")
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	tree, err := Fetch(context.Background(), FetchRequest{URL: u.FileURL(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := tree.CommitMeta; got.Subject != "raise a to 2" || got.Author != "olmsync test" || !got.When.Equal(when) {
		t.Errorf("fetched CommitMeta = %+v, want subject %q by olmsync test at %s", got, "raise a to 2", when)
	}

	u.Push(t, map[string]string{"a.yaml": "a: 3\n"}, long+"\nbody")
	local, err := OpenRevision(u.Work, "HEAD", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	subject := local.CommitMeta.Subject
	if len(subject) > maxSubject || !strings.HasPrefix(long, subject) || len(subject) < maxSubject-1 {
		t.Errorf("local subject has %d bytes (%q), want the first %d bytes or one less, whole runes", len(subject), subject, maxSubject)
	}
}
