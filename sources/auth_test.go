package sources

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCredentialsFromEnvHTTP(t *testing.T) {
	tests := []struct {
		name string
		url  string
		env  map[string]string
		want *Credentials
	}{
		{name: "none", url: "https://github.com/o/r", env: nil, want: nil},
		{name: "username and password", url: "https://git.example/o/r",
			env:  map[string]string{EnvGitUsername: "me", EnvGitPassword: "pw"},
			want: &Credentials{Username: "me", Password: "pw"}},
		{name: "olmsync token wins over the others", url: "https://github.com/o/r",
			env:  map[string]string{EnvGitToken: "t1", EnvGitTokenShort: "t2", EnvGitHubToken: "t3"},
			want: &Credentials{Username: "x-access-token", Password: "t1"}},
		{name: "GIT_TOKEN to any host", url: "https://git.example/o/r",
			env:  map[string]string{EnvGitTokenShort: "t2"},
			want: &Credentials{Username: "git", Password: "t2"}},
		{name: "token with a username", url: "https://bitbucket.example/o/r",
			env:  map[string]string{EnvGitTokenShort: "t2", EnvGitUsername: "x-token-auth"},
			want: &Credentials{Username: "x-token-auth", Password: "t2"}},
		{name: "GITHUB_TOKEN to github.com", url: "https://github.com/o/r",
			env:  map[string]string{EnvGitHubToken: "gh"},
			want: &Credentials{Username: "x-access-token", Password: "gh"}},
		{name: "GITHUB_TOKEN never to another host", url: "https://gitlab.com/o/r",
			env: map[string]string{EnvGitHubToken: "gh"}, want: nil},
		{name: "GITHUB_TOKEN to GitHub Enterprise", url: "https://ghe.corp.example/o/r",
			env:  map[string]string{EnvGitHubToken: "gh", EnvGitHubServerURL: "https://ghe.corp.example"},
			want: &Credentials{Username: "x-access-token", Password: "gh"}},
		{name: "GITHUB_TOKEN not to github.com when the server is Enterprise", url: "https://github.com/o/r",
			env: map[string]string{EnvGitHubToken: "gh", EnvGitHubServerURL: "https://ghe.corp.example"}, want: nil},
		{name: "CI_JOB_TOKEN to its GitLab", url: "https://gitlab.corp.example/o/r.git",
			env:  map[string]string{EnvGitLabJobToken: "job", EnvGitLabServerURL: "https://gitlab.corp.example"},
			want: &Credentials{Username: "gitlab-ci-token", Password: "job"}},
		{name: "CI_JOB_TOKEN never elsewhere", url: "https://github.com/o/r",
			env: map[string]string{EnvGitLabJobToken: "job", EnvGitLabServerURL: "https://gitlab.corp.example"}, want: nil},
		{name: "CI_JOB_TOKEN without a server", url: "https://gitlab.com/o/r",
			env: map[string]string{EnvGitLabJobToken: "job"}, want: nil},
		{name: "file needs none", url: "file:///srv/r.git",
			env: map[string]string{EnvGitTokenShort: "t"}, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CredentialsFromEnv(tc.url, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCredentialsFromEnvSSH(t *testing.T) {
	key := newSSHKey(t)
	home := t.TempDir()
	// The machine's own system-wide file must not leak into the expectations.
	defer func(saved string) { systemKnownHosts = saved }(systemKnownHosts)
	systemKnownHosts = filepath.Join(home, "etc-ssh-known-hosts")
	writeFiles(t, home, map[string]string{
		".ssh/id_ecdsa":    "default ecdsa key",
		".ssh/known_hosts": "home-hosts",
		"custom/id":        string(key.pem),
		"custom/hosts":     "custom-hosts",
		"list/a":           "list-a",
		"list/b":           "list-b",
	})
	tests := []struct {
		name string
		env  map[string]string
		want *Credentials
	}{
		{name: "default key and known_hosts in HOME", env: map[string]string{"HOME": home},
			want: &Credentials{SSHKey: []byte("default ecdsa key"), KnownHosts: []byte("home-hosts\n")}},
		{name: "agent before default keys", env: map[string]string{"HOME": home, EnvSSHAuthSock: "/run/agent.sock"},
			want: &Credentials{SSHAgentSocket: "/run/agent.sock", KnownHosts: []byte("home-hosts\n")}},
		{name: "key file before the agent", env: map[string]string{
			"HOME": home, EnvSSHAuthSock: "/run/agent.sock", EnvSSHKey: filepath.Join(home, "custom/id"),
			EnvSSHKeyPassphrase: "pp", EnvSSHKnownHosts: filepath.Join(home, "custom/hosts"),
		}, want: &Credentials{SSHKey: key.pem, SSHKeyPassphrase: "pp", KnownHosts: []byte("custom-hosts\n")}},
		{name: "SSH_KNOWN_HOSTS list", env: map[string]string{
			EnvSSHKnownHostsList: filepath.Join(home, "list/a") + string(filepath.ListSeparator) + filepath.Join(home, "list/b"),
		}, want: &Credentials{KnownHosts: []byte("list-a\nlist-b\n")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CredentialsFromEnv("git@github.com:o/r.git", func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	_, err := CredentialsFromEnv("ssh://git@h/r", func(k string) string {
		return map[string]string{EnvSSHKey: filepath.Join(home, "missing")}[k]
	})
	if err == nil || !strings.Contains(err.Error(), EnvSSHKey) {
		t.Errorf("a missing key file = %v, want an error naming %s", err, EnvSSHKey)
	}
}

func TestCredentialsFromSecret(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string][]byte
		want    *Credentials
		wantErr bool
	}{
		{name: "basic", data: map[string][]byte{"username": []byte("u"), "password": []byte("p"), "ca.crt": []byte("CA")},
			want: &Credentials{Username: "u", Password: "p", CABundle: []byte("CA")}},
		{name: "bearer", data: map[string][]byte{"bearerToken": []byte("t"), "caFile": []byte("CA")},
			want: &Credentials{BearerToken: "t", CABundle: []byte("CA")}},
		{name: "ssh with passphrase", data: map[string][]byte{"identity": []byte("KEY"), "password": []byte("pp"), "known_hosts": []byte("KH")},
			want: &Credentials{SSHKey: []byte("KEY"), SSHKeyPassphrase: "pp", KnownHosts: []byte("KH")}},
		{name: "bearer and basic", data: map[string][]byte{"bearerToken": []byte("t"), "username": []byte("u")}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CredentialsFromSecret(tc.data)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Printing credentials, however it is done, never shows a secret.
func TestCredentialsNeverPrintSecrets(t *testing.T) {
	c := &Credentials{
		Username: "token-as-user-123", Password: "pass-word-456", BearerToken: "bearer-789",
		SSHKey: []byte("-----BEGIN KEY-----"), SSHKeyPassphrase: "phrase-000", SSHAgentSocket: "/run/agent",
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, c)
		for _, secret := range []string{"token-as-user-123", "pass-word-456", "bearer-789", "BEGIN KEY", "phrase-000"} {
			if strings.Contains(out, secret) {
				t.Errorf("Sprintf(%q) = %q shows %q", format, out, secret)
			}
		}
	}
	if got := fmt.Sprint(c); got != "basic auth, bearer token, ssh key, ssh agent" {
		t.Errorf("String() = %q", got)
	}
	if got := fmt.Sprint((*Credentials)(nil)); got != "no credentials" {
		t.Errorf("nil String() = %q", got)
	}
}

func TestSSHKeyErrors(t *testing.T) {
	key := newSSHKey(t)
	block, err := sshMarshalWithPassphrase(key, "secret-pp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseSSHKey(block, ""); err == nil || !strings.Contains(err.Error(), EnvSSHKeyPassphrase) {
		t.Errorf("a protected key without passphrase = %v", err)
	}
	if _, err := parseSSHKey(block, "secret-pp"); err != nil {
		t.Errorf("a protected key with its passphrase: %v", err)
	}
	_, err = parseSSHKey([]byte("not a key at all but a secret"), "")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("garbage key = %v", err)
	}
}

func TestScrub(t *testing.T) {
	cause := errors.New("server said: bad password hunter2hunter2 for user")
	err := scrub(cause, []string{"hunter2hunter2", "", "ab"})
	if strings.Contains(err.Error(), "hunter2") || !errors.Is(err, cause) {
		t.Errorf("scrub = %q; want the secret gone and the cause kept", err)
	}
	if err := scrub(cause, []string{"absent-secret"}); err != cause { //nolint:errorlint // the very same value, not a wrapper
		t.Error("scrub wrapped an error that held no secret")
	}
	if scrub(nil, nil) != nil {
		t.Error("scrub(nil) != nil")
	}
}
