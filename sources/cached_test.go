package sources

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/gittest"
)

// The reconciler's promise: a server that goes away, or starts refusing the credentials,
// leaves the last good revision readable from the cache, and the revision after it too.
func TestOpenCachedKeepsLastGoodRevision(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"app/version.yaml": "one\n"})
	srv := gittest.Serve(t, u, gittest.ServerOptions{Username: testUser, Password: testPassword})
	cache := t.TempDir()
	req := FetchRequest{URL: srv.RepoURL(), CacheDir: cache, AllowInsecureHTTP: true,
		Credentials: &Credentials{Username: testUser, Password: testPassword}}

	first, err := Fetch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// A commit pushed while the test runs, fetched incrementally.
	u.Push(t, map[string]string{"app/version.yaml": "two\n"}, "two")
	second, err := Fetch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Revision == second.Revision {
		t.Fatalf("the push was not fetched: %s", second.Revision)
	}

	// The credentials stop working: the fetch fails with an *AuthError, the cache stays.
	bad := req
	bad.Credentials = &Credentials{Username: testUser, Password: "rotated-" + testPassword}
	var authErr *AuthError
	if _, err := Fetch(context.Background(), bad); !errors.As(err, &authErr) {
		t.Fatalf("Fetch with a wrong password = %v, want *AuthError", err)
	}
	// The server goes away: *UnreachableError, the cache stays.
	srv.Close()
	var unreachable *UnreachableError
	if _, err := Fetch(context.Background(), req); !errors.As(err, &unreachable) {
		t.Fatalf("Fetch from a closed server = %v, want *UnreachableError", err)
	}

	for rev, want := range map[string]string{first.Revision: "one\n", second.Revision: "two\n"} {
		tree, err := OpenCached(context.Background(), bad, rev)
		if err != nil {
			t.Fatalf("OpenCached(%s): %v", rev, err)
		}
		if tree.Revision != rev || !strings.HasPrefix(rev, "main@sha1:") {
			t.Errorf("OpenCached(%s) read revision %s", rev, tree.Revision)
		}
		if got := mustRead(t, tree, "app/version.yaml"); got != want {
			t.Errorf("OpenCached(%s) app/version.yaml = %q, want %q", rev, got, want)
		}
	}
}

func TestOpenCachedPinnedCommit(t *testing.T) {
	u, h := releases(t)
	srv := gittest.Serve(t, u, gittest.ServerOptions{})
	cache := t.TempDir()
	req := FetchRequest{URL: srv.RepoURL(), Ref: Ref{Commit: h["v1.1.0"]}, CacheDir: cache}
	fetched, err := Fetch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	tree, err := OpenCached(context.Background(), req, fetched.Revision)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Revision != "sha1:"+h["v1.1.0"] || mustRead(t, tree, "app/version.yaml") != "v1.1.0\n" {
		t.Errorf("read %s with %q", tree.Revision, mustRead(t, tree, "app/version.yaml"))
	}
	// Older commits came with the full history of the pinned one.
	if _, err := OpenCached(context.Background(), req, "sha1:"+h["v1.0.0"]); err != nil {
		t.Errorf("an ancestor of the pinned commit: %v", err)
	}
}

func TestOpenCachedErrors(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a\n"})
	cache := t.TempDir()
	req := FetchRequest{URL: u.FileURL(), CacheDir: cache}
	if _, err := Fetch(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	unknown := "main@sha1:" + strings.Repeat("0", 40)
	var notCached *NotCachedError
	for name, tc := range map[string]struct {
		req FetchRequest
		rev string
	}{
		"unknown commit": {req, unknown},
		"empty cache":    {FetchRequest{URL: u.FileURL(), CacheDir: t.TempDir()}, unknown},
		"other URL":      {FetchRequest{URL: "https://git.example.com/other.git", CacheDir: cache}, unknown},
	} {
		_, err := OpenCached(context.Background(), tc.req, tc.rev)
		if !errors.As(err, &notCached) || !strings.Contains(err.Error(), tc.rev) {
			t.Errorf("%s: OpenCached = %v, want *NotCachedError naming the revision", name, err)
		}
	}
	for _, rev := range []string{"", "main", "main@abc123", "sha1:xyz", "main@sha1:" + strings.Repeat("A", 40)} {
		_, err := OpenCached(context.Background(), req, rev)
		if err == nil || errors.As(err, &notCached) {
			t.Errorf("OpenCached(%q) = %v, want an error saying the revision is malformed", rev, err)
		}
	}
	if _, err := OpenCached(context.Background(), FetchRequest{URL: u.FileURL()}, unknown); err == nil {
		t.Error("OpenCached without a cache directory succeeded")
	}
}
