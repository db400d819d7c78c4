package sources

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/olmsync/olmsync/internal/gittest"
)

func TestParseRemoteURL(t *testing.T) {
	tests := []struct {
		raw                                 string
		scheme, host, port, user, clean, rd string
	}{
		{raw: "https://github.com/org/repo.git", scheme: "https", host: "github.com",
			clean: "https://github.com/org/repo.git", rd: "https://github.com/org/repo.git"},
		{raw: "https://user:pa55word@GitHub.com:8443/org/repo", scheme: "https", host: "github.com", port: "8443", user: "user",
			clean: "https://GitHub.com:8443/org/repo", rd: "https://GitHub.com:8443/org/repo"},
		{raw: "https://ghp_tokenvalue@github.com/org/repo", scheme: "https", host: "github.com", user: "ghp_tokenvalue",
			clean: "https://github.com/org/repo", rd: "https://github.com/org/repo"},
		{raw: "http://h/r?private_token=abc#frag", scheme: "http", host: "h",
			clean: "http://h/r?private_token=abc", rd: "http://h/r?***"},
		{raw: "ssh://git@host.example:2222/org/repo.git", scheme: "ssh", host: "host.example", port: "2222", user: "git",
			clean: "ssh://git@host.example:2222/org/repo.git", rd: "ssh://git@host.example:2222/org/repo.git"},
		{raw: "ssh://git:pw@host/r", scheme: "ssh", host: "host", user: "git",
			clean: "ssh://git@host/r", rd: "ssh://git@host/r"},
		{raw: "git@github.com:org/repo.git", scheme: "ssh", host: "github.com", user: "git",
			clean: "git@github.com:org/repo.git", rd: "git@github.com:org/repo.git"},
		{raw: "file:///srv/git/repo.git", scheme: "file",
			clean: "file:///srv/git/repo.git", rd: "file:///srv/git/repo.git"},
	}
	for _, tc := range tests {
		u, err := parseRemoteURL(tc.raw)
		if err != nil {
			t.Errorf("parseRemoteURL(%q): %v", tc.raw, err)
			continue
		}
		got := []string{u.scheme, u.host, u.port, u.user, u.clean, u.redacted}
		want := []string{tc.scheme, tc.host, tc.port, tc.user, tc.clean, tc.rd}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("parseRemoteURL(%q) = %q, want %q", tc.raw, got, want)
				break
			}
		}
	}
}

func TestParseRemoteURLErrorsHideSecrets(t *testing.T) {
	for _, raw := range []string{
		"", "ftp://u:hunter22@h/r", "https://u:hunter22@/r", "https://u:hunter22@h:bad/r", "./local/dir", "/abs/dir",
	} {
		_, err := parseRemoteURL(raw)
		if err == nil {
			t.Errorf("parseRemoteURL(%q) did not fail", raw)
			continue
		}
		if strings.Contains(err.Error(), "hunter22") {
			t.Errorf("error %q shows the password", err)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := map[string]string{
		"https://u:hunter22@h/r":         "https://h/r",
		"https://u:hunter22@h:bad/r":     "https://***@h:bad/r",
		"weird://u:hunter22@h/r":         "weird://***@h/r",
		"git@github.com:o/r.git":         "git@github.com:o/r.git",
		"https://h/r/with@sign/in/path":  "https://h/r/with@sign/in/path",
		"not a url at all":               "not a url at all",
		"ssh://git:hunter22@h/r":         "ssh://git@h/r",
		"https://oauth2:tok12345@gitlab": "https://gitlab",
		// Found by FuzzRedactURL (testdata/fuzz/FuzzRedactURL/523f877057fb3115): an opaque
		// URL ("file:" and no "//") kept its text, password included.
		"file:://user:hunter22@":   "file:://***@",
		"https:://user:hunter22@h": "https:://***@h",
	}
	for raw, want := range tests {
		if got := RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestIsRemoteURL(t *testing.T) {
	tests := map[string]bool{
		"https://github.com/o/r": true,
		"HTTP://h/r":             true,
		"ssh://git@h/r":          true,
		"file:///srv/r.git":      true,
		"git@github.com:o/r.git": true,
		"github.com:o/r.git":     true,
		".":                      false,
		"./examples/repo":        false,
		"/home/me/repo":          false,
		"ftp://h/r":              false,
		`C:\repo`:                false,
		"examples/passing":       false,
	}
	for s, want := range tests {
		if got := IsRemoteURL(s); got != want {
			t.Errorf("IsRemoteURL(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestServerOf(t *testing.T) {
	tests := map[string]string{
		"https://GitHub.com/o/r":            "github.com",
		"https://u:pw@h.example:8443/r.git": "h.example:8443",
		"http://127.0.0.1:9/r.git?token=x":  "127.0.0.1:9",
		"ssh://git@h:2222/r":                "h:2222",
		"git@github.com:o/r.git":            "github.com",
		"file:///srv/r.git":                 "",
		"ftp://h/r":                         "",
		"alice:PW@host:repo.git":            "",
	}
	for s, want := range tests {
		if got := ServerOf(s); got != want {
			t.Errorf("ServerOf(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzRedactURL: whatever the input, a password given in its userinfo never
// survives redaction.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"https://u:pw@h/r", "ssh://git:pw@h:22/r", "git@h:o/r", "http://h/r?x=1", "file:///x"} {
		f.Add(s, "s3cretvalue")
	}
	f.Fuzz(func(t *testing.T, base, password string) {
		if len(password) < 6 || strings.ContainsAny(password, "/@:?#%[] \t\n") {
			return
		}
		scheme, rest, ok := strings.Cut(base, "://")
		if !ok {
			return
		}
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			rest = rest[at+1:]
		}
		if strings.Contains(scheme+rest, password) {
			return // the rest of the URL holds the same characters
		}
		raw := scheme + "://user:" + password + "@" + rest
		if got := RedactURL(raw); strings.Contains(got, password) {
			t.Fatalf("RedactURL(%q) = %q keeps the password", raw, got)
		}
	})
}

// Whatever the scheme, a URL's userinfo never comes back in a message: neither from
// Fetch's refusal of a scheme it does not support, nor from RedactURLs, the last guard of
// the CLI's errors.
func TestUserinfoRedactedWhateverTheScheme(t *testing.T) {
	for _, raw := range []string{
		"ftp://user:hunter22@host/x", "ftp://user:hunter22@host", "git://u:hunter22@h/x",
		"s3://AKIA:hunter22@bucket/repo", "https://hunter22@h/r", "http://u:hunter22@h:8080/r",
		"svn+ssh://u:hunter22@h/r", "ftp://user:pa%zzhunter22@host/x",
	} {
		if !LooksLikeURL(raw) {
			t.Errorf("LooksLikeURL(%q) = false", raw)
		}
		_, err := Fetch(context.Background(), FetchRequest{URL: raw, CacheDir: t.TempDir()})
		if err == nil || strings.Contains(err.Error(), "hunter22") {
			t.Errorf("Fetch(%q) = %v, want an error without the password", raw, err)
		}
		if got := RedactURL(raw); strings.Contains(got, "hunter22") {
			t.Errorf("RedactURL(%q) = %q", raw, got)
		}
		msg := fmt.Sprintf("open %q: lstat /tmp/%s: no such file or directory; again: %s.", raw, raw, raw)
		if got := RedactURLs(msg); strings.Contains(got, "hunter22") || !strings.Contains(got, "://***@") {
			t.Errorf("RedactURLs(%q) = %q", msg, got)
		}
	}
	// A user name alone is redacted too: RedactURLs cannot tell a token from a name.
	if got := RedactURLs("ssh://git@host/x"); got != "ssh://***@host/x" {
		t.Errorf("RedactURLs(ssh://git@host/x) = %q", got)
	}
	for _, plain := range []string{
		"git@github.com:org/repo.git", "https://github.com/org/repo.git", "a@b and c://d/e@f", "./local/dir",
	} {
		if got := RedactURLs(plain); got != plain {
			t.Errorf("RedactURLs(%q) = %q, want it unchanged", plain, got)
		}
	}
	for _, notURL := range []string{"./ftp:/x", "/srv/repo", "C:\\repo", "git@github.com:org/repo.git"} {
		if LooksLikeURL(notURL) {
			t.Errorf("LooksLikeURL(%q) = true", notURL)
		}
	}
}

// TestQueryTokensNeverShown: a URL with a token in its query (?private_token=, GitLab's
// form; ?access_token=) was shown as ?***, but net/http's wrapped error repeated it raw,
// the cache folder was named after it and its git config held it (issue 30). An scp-like
// URL with a password was echoed whole. Each form, against a real git server on
// loopback: no message, cache folder name or file of the cache holds the secret.
func TestQueryTokensNeverShown(t *testing.T) {
	const secret = "S3CRETt0ken42"
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a: 1\n"})
	srv := gittest.Serve(t, u, gittest.ServerOptions{})
	for _, raw := range []string{
		srv.RepoURL() + "?private_token=" + secret,
		srv.RepoURL() + "?x=1&access_token=" + secret,
		strings.Replace(srv.RepoURL(), "http://", "http://oauth2:"+secret+"@", 1),
		"https://host.invalid/r.git?private_token=" + secret,
		"alice:" + secret + "@host.invalid:repo.git",
	} {
		cache := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := Fetch(ctx, FetchRequest{URL: raw, Ref: Ref{Branch: "main"}, CacheDir: cache})
		cancel()
		if err == nil {
			t.Errorf("%s: Fetch did not fail", RedactURL(raw))
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the secret: %v", err)
		}
		if RedactURL(raw) == raw || strings.Contains(RedactURL(raw), secret) {
			t.Errorf("RedactURL(%q) = %q", raw, RedactURL(raw))
		}
		_ = filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.Contains(p, secret) {
				t.Errorf("a cache path holds the secret: %s", p)
			}
			if !d.IsDir() {
				if data, _ := os.ReadFile(p); strings.Contains(string(data), secret) {
					t.Errorf("cache file %s holds the secret", p)
				}
			}
			return nil
		})
	}
}
