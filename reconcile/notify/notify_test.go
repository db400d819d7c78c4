package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTargetOf(t *testing.T) {
	tests := []struct {
		provider Provider
		url, api string
		want     Target
		wantErr  string
	}{
		{GitHub, "https://github.com/acme/gitops.git", "", Target{GitHub, "acme/gitops", "https://api.github.com"}, ""},
		{GitHub, "git@github.com:acme/gitops.git", "", Target{GitHub, "acme/gitops", "https://api.github.com"}, ""},
		{GitHub, "ssh://git@github.example.com/acme/gitops", "", Target{GitHub, "acme/gitops", "https://github.example.com/api/v3"}, ""},
		{GitHub, "https://github.com/acme/gitops", "http://127.0.0.1:9/", Target{GitHub, "acme/gitops", "http://127.0.0.1:9"}, ""},
		{GitLab, "https://gitlab.com/acme/platform/gitops.git", "", Target{GitLab, "acme/platform/gitops", "https://gitlab.com/api/v4"}, ""},
		{GitHub, "https://github.com/acme/platform/gitops", "", Target{}, "a GitHub repository is owner/name"},
		{GitLab, "https://gitlab.com/gitops", "", Target{}, "a GitLab project is group/name"},
		{"bitbucket", "https://bitbucket.org/a/b", "", Target{}, `provider "bitbucket"`},
		{GitHub, "not a url", "", Target{}, "want https://"},
	}
	for _, tt := range tests {
		got, err := TargetOf(tt.provider, tt.url, tt.api)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("TargetOf(%s, %s) error = %v, want %q", tt.provider, tt.url, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("TargetOf(%s, %s) = %+v, %v; want %+v", tt.provider, tt.url, got, err, tt.want)
		}
	}
}

// forge is a loopback server that checks each request as GitHub's and GitLab's commit
// status APIs document them and records what it accepted.
type forge struct {
	got    []map[string]string
	paths  []string
	reject int
}

func (f *forge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.reject != 0 {
		http.Error(w, `{"message":"Bad credentials"}`, f.reject)
		return
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want a JSON POST", http.StatusBadRequest)
		return
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/repos/"):
		// GitHub: https://docs.github.com/en/rest/commits/statuses#create-a-commit-status
		if r.Header.Get("Authorization") != "Bearer t0ken" || r.Header.Get("Accept") != "application/vnd.github+json" ||
			r.Header.Get("X-GitHub-Api-Version") != "2022-11-28" {
			http.Error(w, "headers", http.StatusUnauthorized)
			return
		}
	case strings.HasPrefix(r.URL.Path, "/projects/"):
		// GitLab: https://docs.gitlab.com/api/commits/#set-the-pipeline-status-of-a-commit
		if r.Header.Get("PRIVATE-TOKEN") != "t0ken" {
			http.Error(w, "token", http.StatusUnauthorized)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	var body map[string]string
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.got = append(f.got, body)
	f.paths = append(f.paths, r.URL.EscapedPath())
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(`{"id":1}`))
}

func TestPost(t *testing.T) {
	f := &forge{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	sha := strings.Repeat("a", 40)
	long := strings.Repeat("x", 200)
	gh := Target{GitHub, "acme/gitops", srv.URL}
	gl := Target{GitLab, "acme/platform/gitops", srv.URL}
	ctx := context.Background()
	if err := Post(ctx, nil, gh, Status{Commit: sha, State: Failure, Context: "olmsync/ns/prod", Description: long}, "t0ken"); err != nil {
		t.Fatal(err)
	}
	if err := Post(ctx, nil, gl, Status{Commit: sha, State: Failure, Context: "olmsync/ns/prod", Description: "2 policy violations", TargetURL: "https://olmsync.example.com/syncs/ns/prod"}, "t0ken"); err != nil {
		t.Fatal(err)
	}
	wantPaths := []string{"/repos/acme/gitops/statuses/" + sha, "/projects/acme%2Fplatform%2Fgitops/statuses/" + sha}
	if diff := cmp.Diff(wantPaths, f.paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	want := []map[string]string{
		{"state": "failure", "context": "olmsync/ns/prod", "description": strings.Repeat("x", 139) + "…"},
		{"state": "failed", "name": "olmsync/ns/prod", "description": "2 policy violations", "target_url": "https://olmsync.example.com/syncs/ns/prod"},
	}
	if diff := cmp.Diff(want, f.got); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}

	f.reject = http.StatusUnauthorized
	err := Post(ctx, nil, gh, Status{Commit: sha, State: Success, Context: "c"}, "wrong")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 401 || !strings.Contains(err.Error(), "Bad credentials") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("refused post: %v", err)
	}
	if err := Post(ctx, nil, gh, Status{Commit: sha}, ""); !errors.Is(err, ErrNoToken) {
		t.Errorf("empty token: %v", err)
	}
	srv.Close()
	if err := Post(ctx, nil, gh, Status{Commit: sha, State: Success}, "t0ken"); err == nil || strings.Contains(err.Error(), "t0ken") {
		t.Errorf("server gone: %v", err)
	}
}
