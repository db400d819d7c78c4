package sources

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// Credentials authenticate a fetch. Fill the fields for the URL's transport:
// Username/Password or BearerToken (and CABundle) for https, SSHKey or
// SSHAgentSocket (and KnownHosts) for ssh. They never appear in an error or
// in the cache; String and GoString show only which kind they are.
type Credentials struct {
	// Username and Password are HTTP basic auth. A token goes in Password
	// (with any non-empty Username; GitHub wants "x-access-token" for app
	// and Actions tokens).
	Username string
	Password string
	// BearerToken is sent as "Authorization: Bearer"; not with Username.
	BearerToken string
	// CABundle is PEM certificates trusted for https besides the system's.
	CABundle []byte

	// SSHKey is a PEM private key, SSHKeyPassphrase its passphrase if any.
	SSHKey           []byte
	SSHKeyPassphrase string
	// SSHAgentSocket is the unix socket of an ssh-agent, used when SSHKey
	// is empty.
	SSHAgentSocket string
	// KnownHosts is the content of a known_hosts file. An ssh server's host
	// key must be in it, unless InsecureIgnoreHostKey is set.
	KnownHosts            []byte
	InsecureIgnoreHostKey bool
}

// String names the kind of credentials, never their values.
func (c *Credentials) String() string {
	if c == nil {
		return "no credentials"
	}
	var kinds []string
	if c.Username != "" || c.Password != "" {
		kinds = append(kinds, "basic auth")
	}
	if c.BearerToken != "" {
		kinds = append(kinds, "bearer token")
	}
	if len(c.SSHKey) > 0 {
		kinds = append(kinds, "ssh key")
	}
	if c.SSHAgentSocket != "" {
		kinds = append(kinds, "ssh agent")
	}
	if len(kinds) == 0 {
		return "no credentials"
	}
	return strings.Join(kinds, ", ")
}

// GoString keeps %#v from printing the secrets.
func (c *Credentials) GoString() string { return "sources.Credentials{" + c.String() + "}" }

// secrets lists the values to scrub from any message.
func (c *Credentials) secrets() []string {
	if c == nil {
		return nil
	}
	// A username is not secret as such, but `https://<token>@host` and some
	// CI set-ups put a token there.
	return []string{c.Password, c.BearerToken, c.SSHKeyPassphrase, c.Username}
}

// Environment variables CredentialsFromEnv reads (doc.go explains each).
const (
	EnvGitUsername       = "OLMSYNC_GIT_USERNAME"
	EnvGitPassword       = "OLMSYNC_GIT_PASSWORD"
	EnvGitToken          = "OLMSYNC_GIT_TOKEN"
	EnvGitTokenShort     = "GIT_TOKEN"
	EnvGitHubToken       = "GITHUB_TOKEN"
	EnvGitHubServerURL   = "GITHUB_SERVER_URL"
	EnvGitLabJobToken    = "CI_JOB_TOKEN"
	EnvGitLabServerURL   = "CI_SERVER_URL"
	EnvSSHKey            = "OLMSYNC_SSH_KEY"
	EnvSSHKeyPassphrase  = "OLMSYNC_SSH_KEY_PASSPHRASE"
	EnvSSHKnownHosts     = "OLMSYNC_SSH_KNOWN_HOSTS"
	EnvSSHKnownHostsList = "SSH_KNOWN_HOSTS"
	EnvSSHAuthSock       = "SSH_AUTH_SOCK"
)

// CredentialsFromEnv gathers credentials for rawURL from the environment,
// the way a person or a CI job expects (doc.go lists the variables and their
// order). getenv is os.Getenv when nil. It returns nil for a URL that needs
// none or when the environment offers none; CI tokens are only ever sent to
// their own server.
func CredentialsFromEnv(rawURL string, getenv func(string) string) (*Credentials, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	u, err := parseRemoteURL(rawURL)
	if err != nil {
		return nil, err
	}
	switch u.scheme {
	case "https", "http":
		return httpCredentialsFromEnv(u, getenv), nil
	case "ssh":
		return sshCredentialsFromEnv(getenv)
	}
	return nil, nil
}

func httpCredentialsFromEnv(u *remoteURL, getenv func(string) string) *Credentials {
	user, password := getenv(EnvGitUsername), getenv(EnvGitPassword)
	if password != "" {
		return &Credentials{Username: orDefault(user, "git"), Password: password}
	}
	for _, name := range []string{EnvGitToken, EnvGitTokenShort} {
		if token := getenv(name); token != "" {
			return &Credentials{Username: orDefault(user, defaultTokenUser(u.host)), Password: token}
		}
	}
	if token := getenv(EnvGitHubToken); token != "" && u.host == serverHost(getenv(EnvGitHubServerURL), "github.com") {
		return &Credentials{Username: "x-access-token", Password: token}
	}
	if token := getenv(EnvGitLabJobToken); token != "" && u.host == serverHost(getenv(EnvGitLabServerURL), "") {
		return &Credentials{Username: "gitlab-ci-token", Password: token}
	}
	return nil
}

func defaultTokenUser(host string) string {
	if host == "github.com" {
		return "x-access-token"
	}
	return "git"
}

// serverHost is the lower-case host of a CI's server URL, or def when unset.
func serverHost(serverURL, def string) string {
	if serverURL == "" {
		return def
	}
	u, err := parseRemoteURL(serverURL)
	if err != nil {
		return def
	}
	return u.host
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func sshCredentialsFromEnv(getenv func(string) string) (*Credentials, error) {
	c := &Credentials{SSHKeyPassphrase: getenv(EnvSSHKeyPassphrase)}
	home := getenv("HOME")
	switch keyFile := getenv(EnvSSHKey); {
	case keyFile != "":
		key, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("ssh key from %s: %w", EnvSSHKey, err)
		}
		c.SSHKey = key
	case getenv(EnvSSHAuthSock) != "":
		c.SSHAgentSocket = getenv(EnvSSHAuthSock)
	case home != "":
		for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			if key, err := os.ReadFile(filepath.Join(home, ".ssh", name)); err == nil {
				c.SSHKey = key
				break
			}
		}
	}
	hosts, err := readKnownHosts(knownHostsFiles(getenv, home))
	if err != nil {
		return nil, err
	}
	c.KnownHosts = hosts
	return c, nil
}

// systemKnownHosts is ssh's system-wide known_hosts file.
var systemKnownHosts = "/etc/ssh/ssh_known_hosts"

// knownHostsFiles are the files to trust host keys from, in ssh's order.
func knownHostsFiles(getenv func(string) string, home string) []string {
	if f := getenv(EnvSSHKnownHosts); f != "" {
		return []string{f}
	}
	if list := getenv(EnvSSHKnownHostsList); list != "" {
		return filepath.SplitList(list)
	}
	files := []string{systemKnownHosts}
	if home != "" {
		files = append([]string{filepath.Join(home, ".ssh", "known_hosts")}, files...)
	}
	return files
}

// readKnownHosts concatenates the files that exist; a file named explicitly
// but unreadable for another reason is an error.
func readKnownHosts(files []string) ([]byte, error) {
	var all []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read known_hosts: %w", err)
		}
		all = append(append(all, data...), '\n')
	}
	return all, nil
}

// CredentialsFromSecret reads credentials from a Kubernetes Secret's data
// with Flux's keys: "username" and "password" (basic auth), "bearerToken",
// "ca.crt" (or "caFile"), "identity" (ssh private key; "password" is then
// its passphrase) and "known_hosts".
func CredentialsFromSecret(data map[string][]byte) (*Credentials, error) {
	c := &Credentials{
		BearerToken: string(data["bearerToken"]),
		CABundle:    data["ca.crt"],
		SSHKey:      data["identity"],
		KnownHosts:  data["known_hosts"],
	}
	if len(c.CABundle) == 0 {
		c.CABundle = data["caFile"]
	}
	if len(c.SSHKey) > 0 {
		c.SSHKeyPassphrase = string(data["password"])
	} else {
		c.Username, c.Password = string(data["username"]), string(data["password"])
	}
	if c.BearerToken != "" && (c.Username != "" || c.Password != "") {
		return nil, errors.New("secret has both bearerToken and username/password: keep one")
	}
	return c, nil
}

// transportAuth turns credentials into go-git's auth method for u. The
// returned cleanup releases what it opened (an agent connection).
func (c *Credentials) transportAuth(ctx context.Context, u *remoteURL, allowInsecureHTTP bool) (transport.AuthMethod, func(), error) {
	noop := func() {}
	switch u.scheme {
	case "https", "http":
		return c.httpAuth(u, allowInsecureHTTP)
	case "ssh":
		return c.sshAuth(ctx, u)
	}
	return nil, noop, nil
}

func (c *Credentials) httpAuth(u *remoteURL, allowInsecureHTTP bool) (transport.AuthMethod, func(), error) {
	noop := func() {}
	if c == nil || (c.Username == "" && c.Password == "" && c.BearerToken == "") {
		return nil, noop, nil
	}
	if u.scheme == "http" && !allowInsecureHTTP {
		return nil, noop, &AuthError{URL: u.redacted, Err: errors.New("refusing to send credentials over plain http")}
	}
	if c.BearerToken != "" {
		return &githttp.TokenAuth{Token: c.BearerToken}, noop, nil
	}
	return &githttp.BasicAuth{Username: c.Username, Password: c.Password}, noop, nil
}

func (c *Credentials) sshAuth(ctx context.Context, u *remoteURL) (transport.AuthMethod, func(), error) {
	noop := func() {}
	if c == nil {
		c = &Credentials{}
	}
	// The context bounds the connection through the dialer of ssh_dial.go.
	a := &sshAuth{user: orDefault(u.user, "git"), host: net.JoinHostPort(u.host, orDefault(u.port, "22"))}
	if err := a.setHostKeyCheck(c, u); err != nil {
		return nil, noop, err
	}
	switch {
	case len(c.SSHKey) > 0:
		signer, err := parseSSHKey(c.SSHKey, c.SSHKeyPassphrase)
		if err != nil {
			return nil, noop, &AuthError{URL: u.redacted, Err: err}
		}
		a.methods = []ssh.AuthMethod{ssh.PublicKeys(signer)}
		return a, noop, nil
	case c.SSHAgentSocket != "":
		var d net.Dialer
		conn, err := d.DialContext(ctx, "unix", c.SSHAgentSocket)
		if err != nil {
			return nil, noop, &AuthError{URL: u.redacted, Err: fmt.Errorf("ssh agent: %w", err)}
		}
		a.methods = []ssh.AuthMethod{ssh.PublicKeysCallback(agent.NewClient(conn).Signers)}
		return a, func() { _ = conn.Close() }, nil
	}
	return nil, noop, &AuthError{URL: u.redacted, Err: errors.New("no ssh key and no ssh agent")}
}

func parseSSHKey(pem []byte, passphrase string) (ssh.Signer, error) {
	var (
		signer ssh.Signer
		err    error
	)
	if passphrase != "" {
		signer, err = ssh.ParsePrivateKeyWithPassphrase(pem, []byte(passphrase))
	} else {
		signer, err = ssh.ParsePrivateKey(pem)
	}
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("ssh key is protected by a passphrase (set %s)", EnvSSHKeyPassphrase)
	case err != nil:
		// The parser's message never quotes the key.
		return nil, fmt.Errorf("ssh key: %w", err)
	}
	return signer, nil
}

// setHostKeyCheck trusts the known_hosts given, and asks the server for the
// key types listed there for it, so a server with several host keys does
// not offer one we cannot check.
func (a *sshAuth) setHostKeyCheck(c *Credentials, u *remoteURL) error {
	if c.InsecureIgnoreHostKey {
		a.hostKeyCallback = ssh.InsecureIgnoreHostKey()
		return nil
	}
	if len(strings.TrimSpace(string(c.KnownHosts))) == 0 {
		return &AuthError{URL: u.redacted, Err: fmt.Errorf("no known_hosts entries to check the host key of %s against", u.host)}
	}
	db, err := knownHostsDB(c.KnownHosts)
	if err != nil {
		return &AuthError{URL: u.redacted, Err: err}
	}
	a.hostKeyCallback = db.HostKeyCallback()
	a.hostKeyAlgorithms = db.HostKeyAlgorithms
	return nil
}

// knownHostsDB parses known_hosts content. The parsers read only files, so
// the content goes through a private temporary file that is gone before
// this returns.
func knownHostsDB(content []byte) (*knownhosts.HostKeyDB, error) {
	f, err := os.CreateTemp("", "olmsync-known-hosts-")
	if err != nil {
		return nil, fmt.Errorf("known_hosts: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	_, werr := f.Write(content)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("known_hosts: %w", werr)
	}
	db, err := knownhosts.NewDB(f.Name())
	if err != nil {
		return nil, fmt.Errorf("known_hosts: %s", strings.ReplaceAll(err.Error(), f.Name(), "known_hosts"))
	}
	return db, nil
}

// sshAuth is go-git's ssh AuthMethod (Name, String, ClientConfig) for the
// credentials above.
type sshAuth struct {
	user              string
	methods           []ssh.AuthMethod
	hostKeyCallback   ssh.HostKeyCallback
	hostKeyAlgorithms func(hostWithPort string) []string
	host              string // host:port, to look the host's key types up
}

func (a *sshAuth) Name() string   { return "olmsync-ssh" }
func (a *sshAuth) String() string { return fmt.Sprintf("ssh user %q", a.user) }

// ClientConfig is called by go-git for each connection.
func (a *sshAuth) ClientConfig() (*ssh.ClientConfig, error) {
	cfg := &ssh.ClientConfig{
		User:            a.user,
		Auth:            a.methods,
		HostKeyCallback: a.hostKeyCallback,
	}
	if a.hostKeyAlgorithms != nil && a.host != "" {
		cfg.HostKeyAlgorithms = a.hostKeyAlgorithms(a.host)
	}
	return cfg, nil
}
