package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Provider is a forge whose commit status API olmsync speaks.
type Provider string

const (
	GitHub Provider = "github"
	GitLab Provider = "gitlab"
)

// State is the outcome posted, in olmsync's words; each provider has its own spelling.
type State string

const (
	Pending State = "pending"
	Success State = "success"
	Failure State = "failure"
)

// Status is one commit status: what a Sync did with a commit.
type Status struct {
	// Commit is the full SHA the status is about.
	Commit string
	State  State
	// Context names the status among the commit's others (one per Sync):
	// "olmsync/<namespace>/<name>".
	Context string
	// Description says what happened, shortened to what the forge keeps.
	Description string
	// TargetURL, when set, is where the status links to (a dashboard).
	TargetURL string
}

// Target is where statuses go: the forge, the repository on it, and the API to call.
type Target struct {
	Provider Provider
	// Repository is the repository's path on the forge: "owner/repo" on GitHub, the
	// project's full path ("group/subgroup/project") on GitLab.
	Repository string
	// APIURL is the API's base URL: https://api.github.com, https://<host>/api/v3 for a
	// GitHub Enterprise Server, https://<host>/api/v4 for GitLab.
	APIURL string
}

// TargetOf finds the forge and repository of a repository URL (https, ssh or scp-like),
// the API of a github.com / gitlab.com repository, and that of a self-hosted one of the
// given provider (apiURL overrides it).
func TargetOf(provider Provider, repoURL, apiURL string) (Target, error) {
	host, path, err := splitRepoURL(repoURL)
	if err != nil {
		return Target{}, err
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	t := Target{Provider: provider, Repository: path, APIURL: strings.TrimSuffix(apiURL, "/")}
	switch provider {
	case GitHub:
		if strings.Count(path, "/") != 1 {
			return Target{}, fmt.Errorf("repository %q: a GitHub repository is owner/name", path)
		}
		if t.APIURL == "" {
			t.APIURL = "https://api.github.com"
			if host != "github.com" {
				t.APIURL = "https://" + host + "/api/v3"
			}
		}
	case GitLab:
		if !strings.Contains(path, "/") {
			return Target{}, fmt.Errorf("repository %q: a GitLab project is group/name", path)
		}
		if t.APIURL == "" {
			t.APIURL = "https://" + host + "/api/v4"
		}
	default:
		return Target{}, fmt.Errorf("provider %q: want github or gitlab", provider)
	}
	return t, nil
}

// splitRepoURL returns the host and path of https://host/path, ssh://user@host/path or
// user@host:path.
func splitRepoURL(raw string) (host, path string, err error) {
	if !strings.Contains(raw, "://") {
		at, colon := strings.Index(raw, "@"), strings.Index(raw, ":")
		if at < 0 || colon < at {
			return "", "", fmt.Errorf("repository URL: want https://, ssh:// or user@host:path")
		}
		return raw[at+1 : colon], raw[colon+1:], nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("repository URL cannot be parsed")
	}
	return u.Hostname(), u.Path, nil
}

// maxDescription is GitHub's limit on a status description (GitLab keeps more).
const maxDescription = 140

// Request builds the HTTP request of a status, as the provider's API documents it. The
// token is the request's only secret.
func Request(ctx context.Context, t Target, s Status, token string) (*http.Request, error) {
	desc := shorten(s.Description, maxDescription)
	var (
		endpoint string
		body     map[string]string
	)
	switch t.Provider {
	case GitHub:
		state := map[State]string{Pending: "pending", Success: "success", Failure: "failure"}[s.State]
		endpoint = fmt.Sprintf("%s/repos/%s/statuses/%s", t.APIURL, t.Repository, url.PathEscape(s.Commit))
		body = map[string]string{"state": state, "context": s.Context, "description": desc}
	case GitLab:
		state := map[State]string{Pending: "pending", Success: "success", Failure: "failed"}[s.State]
		endpoint = fmt.Sprintf("%s/projects/%s/statuses/%s", t.APIURL, url.PathEscape(t.Repository), url.PathEscape(s.Commit))
		body = map[string]string{"state": state, "name": s.Context, "description": desc}
	default:
		return nil, fmt.Errorf("provider %q: want github or gitlab", t.Provider)
	}
	if s.TargetURL != "" {
		body["target_url"] = s.TargetURL
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "olmsync")
	switch t.Provider {
	case GitHub:
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
		req.Header.Set("Authorization", "Bearer "+token)
	case GitLab:
		req.Header.Set("PRIVATE-TOKEN", token)
	}
	return req, nil
}

// shorten cuts s to at most n runes, ending with "…" when cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// APIError is a status the forge refused; it carries the HTTP status and the start of the
// answer, never the request.
type APIError struct {
	Code int
	Body string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("the forge answered %d: %s", e.Code, e.Body)
}

// ErrNoToken: the Secret holds no token.
var ErrNoToken = errors.New("no token")

// DefaultTimeout bounds one post.
const DefaultTimeout = 15 * time.Second

// Post sends a status with c (http.DefaultClient when nil), within DefaultTimeout.
func Post(ctx context.Context, c *http.Client, t Target, s Status, token string) error {
	if token == "" {
		return ErrNoToken
	}
	if c == nil {
		c = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	req, err := Request(ctx, t, s, token)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Errorf("post the commit status to %s: %w", t.APIURL, ue.Err)
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &APIError{Code: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return nil
}
