package sources

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// scpLike matches git's `[user@]host:path` form of an ssh URL. The host has
// no slash and the path does not start with one more colon's worth of port,
// so `C:\dir` and `./a:b` are not taken for it.
var scpLike = regexp.MustCompile(`^(?:([^@/:\s]+)@)?([a-zA-Z0-9][a-zA-Z0-9.\-]*):([^/\\].*|/.+)$`)

// remoteURL is a repository URL taken apart once, so that the URL handed to
// go-git and written into the cache never carries a secret and every message
// shows the redacted form.
type remoteURL struct {
	scheme   string // https, http, ssh or file
	host     string // hostname without port, lower case
	port     string // empty for the scheme's default
	user     string // ssh user, or the username of http(s) userinfo
	password string // the password of http(s) userinfo (moved into Credentials)
	clean    string // the URL go-git fetches: no http(s) userinfo, no password
	// stored is clean without its query, which may hold a token (?private_token=…): the
	// URL a cache repository's config and directory name are made of.
	stored   string
	query    url.Values // the query's values: secrets, for all this package knows
	redacted string     // the URL for messages
}

// ServerOf is the server a repository URL reaches, host and port as in "git.example.com"
// or "127.0.0.1:8080" (lower case, the port when there is one), for whatever is bounded per
// server; "" for a file:// URL or one Fetch would refuse.
func ServerOf(raw string) string {
	u, err := parseRemoteURL(raw)
	if err != nil || u.scheme == "file" {
		return ""
	}
	if u.port != "" {
		return net.JoinHostPort(u.host, u.port)
	}
	return u.host
}

// IsRemoteURL reports whether s is a repository URL that Fetch accepts
// (https, http, ssh, file, or scp-like `user@host:path`) rather than a local
// directory.
func IsRemoteURL(s string) bool {
	if scheme, _, ok := strings.Cut(s, "://"); ok {
		switch strings.ToLower(scheme) {
		case "https", "http", "ssh", "file":
			return true
		}
		return false
	}
	return scpLike.MatchString(s)
}

// LooksLikeURL reports whether s is written as a URL (a scheme, then "://"), whatever the
// scheme: such a string is never a local folder, and a scheme Fetch does not support is
// its error to report (with the URL redacted), not a folder to look for.
func LooksLikeURL(s string) bool { return urlScheme.MatchString(s) }

var urlScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://`)

// userinfoInText finds the userinfo of every URL in a text, whatever its scheme: the
// scheme, "://", and what comes before an "@" with no "/", space or quote in between.
var userinfoInText = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s"'@]+@`)

// queryInText finds the query of every URL in a text: "?" after a scheme, "://" and a
// path with no space or quote, to the next space or quote, less the punctuation that
// ends a sentence ("…r.git?x: git server …").
var queryInText = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'?]*)\?[^\s"']*[^\s"':,;.)]`)

// scpPassword finds a "user:password@" that opens a word: an scp-like URL given a password.
var scpPassword = regexp.MustCompile(`(^|[\s"'])([^@/:\s"']+):[^@/\s"']*@`)

// RedactURLs returns text with the userinfo and the query of every URL in it, of any
// scheme, replaced by "***", and the password of an scp-like one: the last guard before an
// error reaches a person, for messages that may hold a URL no code of this package took
// apart (a catalog image reference, net/http's error repeating the URL it asked for).
func RedactURLs(text string) string {
	text = userinfoInText.ReplaceAllString(text, "${1}***@")
	text = queryInText.ReplaceAllString(text, "${1}?***")
	return scpPassword.ReplaceAllString(text, "${1}${2}:***@")
}

// RedactURL returns the URL with anything secret removed: the userinfo of an
// http(s) URL, the password of any other, and query values. It is what every
// message of this package shows. A string it cannot parse is returned with
// everything between "://" and "@" blanked.
func RedactURL(raw string) string {
	u, err := parseRemoteURL(raw)
	if err == nil {
		// A URL can carry a second "://user:password@" where net/url sees only a path
		// ("file:/://u:p@h", found by FuzzRedactURL): blank any that remains.
		return passwordAfterSeparator.ReplaceAllString(u.redacted, "://***@")
	}
	return blankUserinfo(raw)
}

// passwordAfterSeparator is a "user:password@" right after a "://", wherever it is in one
// URL: quotes included, which a password may hold ("file:/://user:pa'ss@", found by
// FuzzRedactURL), unlike a URL quoted in a message (userinfoInText).
var passwordAfterSeparator = regexp.MustCompile(`://[^/\s@]*:[^/\s@]*@`)

func blankUserinfo(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return scpPassword.ReplaceAllString(raw, "${1}${2}:***@")
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if slash := strings.Index(rest, "/"); slash < 0 || at < slash {
			rest = "***@" + rest[at+1:]
		}
	}
	return scheme + "://" + rest
}

func parseRemoteURL(raw string) (*remoteURL, error) {
	if raw == "" {
		return nil, fmt.Errorf("empty repository URL")
	}
	if !strings.Contains(raw, "://") {
		if scpPassword.MatchString(raw) {
			return nil, fmt.Errorf("repository URL %q: an scp-like URL (user@host:path) cannot carry a password: use ssh:// with a key, or https:// with the password in a Secret (spec.source.secretRef) or $OLMSYNC_GIT_TOKEN",
				blankUserinfo(raw))
		}
		if m := scpLike.FindStringSubmatch(raw); m != nil {
			return &remoteURL{
				scheme:   "ssh",
				host:     strings.ToLower(m[2]),
				user:     m[1],
				clean:    raw,
				stored:   raw,
				redacted: raw,
			}, nil
		}
		return nil, fmt.Errorf("repository URL %q: want https://, http://, ssh://, file:// or user@host:path",
			blankUserinfo(raw))
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		// url.Error repeats the URL, secrets included: never wrap it. An opaque URL
		// ("file:://u:p@h", no "//" after the scheme) has no userinfo to take the
		// password out of: it would be shown as written.
		return nil, fmt.Errorf("repository URL %q cannot be parsed", blankUserinfo(raw))
	}
	r := &remoteURL{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	switch r.scheme {
	case "https", "http", "ssh", "file":
	default:
		return nil, fmt.Errorf("repository URL %q: scheme %q is not supported (https, http, ssh, file)",
			blankUserinfo(raw), u.Scheme)
	}
	if r.scheme != "file" && r.host == "" {
		return nil, fmt.Errorf("repository URL %q has no host", blankUserinfo(raw))
	}
	if u.User != nil {
		r.user = u.User.Username()
		r.password, _ = u.User.Password()
	}
	clean := *u
	clean.Fragment, clean.RawFragment = "", ""
	switch {
	case r.scheme == "ssh" && r.user != "":
		clean.User = url.User(r.user)
	default:
		clean.User = nil
	}
	r.clean = clean.String()
	r.query = u.Query()
	bare := clean
	bare.RawQuery, bare.ForceQuery = "", false
	r.stored = bare.String()

	shown := clean
	if shown.RawQuery != "" {
		shown.RawQuery = "***"
	}
	r.redacted = shown.String()
	return r, nil
}

// secrets lists what must never appear in a message about this URL.
func (u *remoteURL) secrets() []string {
	s := []string{u.password}
	if u.scheme == "https" || u.scheme == "http" {
		// `https://<token>@host/...` puts a token where the username goes.
		s = append(s, u.user)
	}
	// `?private_token=<token>`, `?access_token=<token>`: every query value.
	for _, values := range u.query {
		s = append(s, values...)
	}
	return s
}
