package check

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/report"
	"github.com/olmsync/olmsync/sources"
)

func trimmed(fs files) files {
	out := files{}
	for p, content := range fs {
		out[p] = strings.TrimLeft(content, "\n")
	}
	return out
}

// TestSourceOpen checks what each way of naming a revision reads, from a real repository
// on disk and through a file:// URL (go-git's transport, into a cache).
func TestSourceOpen(t *testing.T) {
	dir := gittest.Init(t)
	first := gittest.Commit(t, dir, trimmed(passingRepo()), "first")
	gittest.Git(t, dir, "tag", "v1.0.0")
	gittest.Git(t, dir, "branch", "release")
	second := gittest.Commit(t, dir, files{
		"team-a/installplan.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: InstallPlan\nmetadata: {name: ip}\n",
	}, "second: an InstallPlan (OP010)")
	gittest.Write(t, dir, files{ // uncommitted: a ClusterRole in team-a (OP011)
		"team-a/rbac.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: x}\n",
	})
	url := "file://" + dir
	cache := t.TempDir()

	tests := []struct {
		name    string
		src     Source
		wantRev report.Revision
		wantIDs []string
	}{
		{"folder as it is on disk", Source{Location: dir}, report.Revision{Ref: "worktree"}, []string{"OP010", "OP011"}},
		{"folder at a branch", Source{Location: dir, Ref: "main"}, report.Revision{Ref: "main", Commit: second}, []string{"OP010"}},
		{"folder at HEAD~1", Source{Location: dir, Ref: "HEAD~1"}, report.Revision{Commit: first}, nil},
		{"URL, default branch", Source{Location: url, CacheDir: cache}, report.Revision{Ref: "main", Commit: second}, []string{"OP010"}},
		{"URL at a branch", Source{Location: url, CacheDir: cache, Ref: "release"}, report.Revision{Ref: "release", Commit: first}, nil},
		{"URL at a tag", Source{Location: url, CacheDir: cache, Ref: "v1.0.0"}, report.Revision{Ref: "v1.0.0", Commit: first}, nil},
		{"URL at a commit", Source{Location: url, CacheDir: cache, Ref: first}, report.Revision{Commit: first}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, err := tt.src.Open(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			res := run(t, tree, Options{})
			if diff := cmp.Diff(tt.wantRev, res.Revision); diff != "" {
				t.Errorf("revision (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantIDs, ruleIDs(res)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("unknown revisions", func(t *testing.T) {
		_, err := Source{Location: url, CacheDir: cache, Ref: "nope"}.Open(context.Background())
		var unknown *sources.UnknownRefError
		if !errors.As(err, &unknown) || !strings.Contains(err.Error(), `no branch or tag "nope"`) {
			t.Errorf("URL: error %v", err)
		}
		_, err = Source{Location: dir, Ref: "nope"}.Open(context.Background())
		if !errors.As(err, &unknown) {
			t.Errorf("folder: error %v", err)
		}
	})
}

func TestRemoteRefs(t *testing.T) {
	hash := strings.Repeat("ab", 20)
	tests := []struct {
		rev  string
		want []sources.Ref
	}{
		{"", []sources.Ref{{}}},
		{hash, []sources.Ref{{Commit: hash}}},
		{"main", []sources.Ref{{Branch: "main"}, {Tag: "main"}}},
		{"abc123", []sources.Ref{{Branch: "abc123"}, {Tag: "abc123"}}}, // a short hash cannot be fetched
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, remoteRefs(tt.rev)); diff != "" {
			t.Errorf("remoteRefs(%q) (-want +got):\n%s", tt.rev, diff)
		}
	}
}
