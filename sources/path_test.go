package sources

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/gittest"
)

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		escape   bool
	}{
		{in: "", want: ""},
		{in: ".", want: ""},
		{in: "./", want: ""},
		{in: "/", want: ""},
		{in: "clusters/prod", want: "clusters/prod"},
		{in: "./clusters/prod/", want: "clusters/prod"},
		{in: "/clusters//prod", want: "clusters/prod"},
		{in: "..", escape: true},
		{in: "clusters/../../etc", escape: true},
		// Even a ".." that would stay inside is refused: a path that reads as leaving the
		// repository is a mistake worth saying.
		{in: "clusters/../apps", escape: true},
	} {
		got, err := CleanPath(tc.in)
		var esc *PathEscapeError
		if tc.escape {
			if !errors.As(err, &esc) {
				t.Errorf("CleanPath(%q) = %q, %v; want a *PathEscapeError", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// A fetch confined to a folder reads only that folder, from the server and from the cache;
// a folder the revision lacks is a *PathNotFoundError naming the fetched revision.
func TestFetchPath(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{
		"olmsync.yaml":          "broken: [\n",
		"clusters/prod/cm.yaml": "kind: ConfigMap\n",
	})
	cache := t.TempDir()
	req := FetchRequest{URL: u.FileURL(), CacheDir: cache, Path: "./clusters/prod"}
	tree, err := Fetch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, tree, "cm.yaml"); got != "kind: ConfigMap\n" {
		t.Errorf("cm.yaml = %q", got)
	}
	if tree.FS.Exists(tree.Abs("olmsync.yaml")) || tree.FS.Exists(tree.Abs("../../olmsync.yaml")) {
		t.Error("the tree of clusters/prod shows the root's olmsync.yaml")
	}
	cached, err := OpenCached(context.Background(), req, tree.Revision)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, cached, "cm.yaml"); got != "kind: ConfigMap\n" || cached.FS.Exists(cached.Abs("olmsync.yaml")) {
		t.Errorf("OpenCached with a path read cm.yaml = %q, olmsync.yaml shown: %v", got, cached.FS.Exists(cached.Abs("olmsync.yaml")))
	}

	missing := req
	missing.Path = "clusters/staging"
	var notFound *PathNotFoundError
	_, err = Fetch(context.Background(), missing)
	if !errors.As(err, &notFound) || notFound.Revision != tree.Revision || notFound.Path != "clusters/staging" {
		t.Fatalf("Fetch of a missing folder = %v, want *PathNotFoundError at %s", err, tree.Revision)
	}
	if !strings.Contains(err.Error(), `folder "clusters/staging" not found in main@sha1:`) {
		t.Errorf("error %q does not name the folder and the revision", err)
	}
	if _, err := OpenCached(context.Background(), missing, tree.Revision); !errors.As(err, &notFound) {
		t.Errorf("OpenCached of a missing folder = %v, want *PathNotFoundError", err)
	}
}

// A path out of the repository is refused before the server is asked anything.
func TestFetchPathEscapeRefusedBeforeFetching(t *testing.T) {
	var esc *PathEscapeError
	_, err := Fetch(context.Background(), FetchRequest{URL: "http://" + closedPort(t) + "/r.git", CacheDir: t.TempDir(), Path: "../other"})
	if !errors.As(err, &esc) {
		t.Fatalf("Fetch with path ../other = %v, want *PathEscapeError (and no attempt to reach the server)", err)
	}
}
