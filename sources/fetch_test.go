package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/olmsync/olmsync/internal/gittest"
)

const (
	testUser     = "olmsync-ci"
	testPassword = "s3cret-Passw0rd-xyzzy"
)

// releases is an upstream with a history of tagged releases on main:
// v1.0.0 (lightweight), v1.1.0 (annotated), v1.2.0-rc.1, v2.0.0, a
// non-version tag "latest", then one untagged commit. It returns the hash of
// each, by name, and "tip".
func releases(t *testing.T) (*gittest.Upstream, map[string]string) {
	t.Helper()
	u := gittest.NewUpstream(t, map[string]string{"app/version.yaml": "v1.0.0\n"})
	hashes := map[string]string{"v1.0.0": u.Head(t)}
	gittest.Git(t, u.Work, "tag", "v1.0.0")
	for _, v := range []string{"v1.1.0", "v1.2.0-rc.1", "v2.0.0"} {
		hashes[v] = commitFiles(t, u.Work, map[string]string{"app/version.yaml": v + "\n"}, v)
		if v == "v1.1.0" {
			gittest.Git(t, u.Work, "tag", "-a", "-m", "release "+v, v)
		} else {
			gittest.Git(t, u.Work, "tag", v)
		}
	}
	gittest.Git(t, u.Work, "tag", "latest")
	hashes["tip"] = commitFiles(t, u.Work, map[string]string{"app/version.yaml": "tip\n"}, "tip")
	u.PushRefs(t)
	return u, hashes
}

func TestFetchRefKinds(t *testing.T) {
	u, h := releases(t)
	gittest.Git(t, u.Work, "push", "-q", "origin", h["v1.0.0"]+":refs/heads/maintenance")
	tests := []struct {
		name         string
		ref          Ref
		wantRevision string
		wantVersion  string
	}{
		{"default branch", Ref{}, "main@sha1:" + h["tip"], "tip"},
		{"branch", Ref{Branch: "main"}, "main@sha1:" + h["tip"], "tip"},
		{"other branch", Ref{Branch: "maintenance"}, "maintenance@sha1:" + h["v1.0.0"], "v1.0.0"},
		{"lightweight tag", Ref{Tag: "v1.0.0"}, "v1.0.0@sha1:" + h["v1.0.0"], "v1.0.0"},
		{"annotated tag", Ref{Tag: "v1.1.0"}, "v1.1.0@sha1:" + h["v1.1.0"], "v1.1.0"},
		{"semver highest in range", Ref{SemVer: ">=1.0.0 <2.0.0"}, "v1.1.0@sha1:" + h["v1.1.0"], "v1.1.0"},
		{"semver pre-release asked for", Ref{SemVer: ">=1.2.0-rc.0 <2.0.0"}, "v1.2.0-rc.1@sha1:" + h["v1.2.0-rc.1"], "v1.2.0-rc.1"},
		{"semver any", Ref{SemVer: ">=0.0.0"}, "v2.0.0@sha1:" + h["v2.0.0"], "v2.0.0"},
		{"commit", Ref{Commit: h["v1.1.0"]}, "sha1:" + h["v1.1.0"], "v1.1.0"},
		{"commit on branch", Ref{Branch: "main", Commit: h["v1.0.0"]}, "main@sha1:" + h["v1.0.0"], "v1.0.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := Fetch(context.Background(), FetchRequest{URL: u.FileURL(), Ref: tc.ref, CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if tree.Revision != tc.wantRevision {
				t.Errorf("Revision = %q, want %q", tree.Revision, tc.wantRevision)
			}
			if got := mustRead(t, tree, "app/version.yaml"); got != tc.wantVersion+"\n" {
				t.Errorf("app/version.yaml = %q, want %q", got, tc.wantVersion)
			}
			if tree.Source != u.FileURL() || tree.Root != "/repo" {
				t.Errorf("Source %q Root %q", tree.Source, tree.Root)
			}
		})
	}
}

func TestFetchUnknownRefs(t *testing.T) {
	u, _ := releases(t)
	for _, ref := range []Ref{
		{Branch: "nope"},
		{Tag: "v9.9.9"},
		{SemVer: ">=3.0.0"},
		{Commit: strings.Repeat("0123456789", 4)},
		{Branch: "main", Commit: strings.Repeat("0123456789", 4)},
	} {
		t.Run(ref.String(), func(t *testing.T) {
			_, err := Fetch(context.Background(), FetchRequest{URL: u.FileURL(), Ref: ref, CacheDir: t.TempDir()})
			var unknown *UnknownRefError
			if !errors.As(err, &unknown) {
				t.Fatalf("Fetch(%s) = %v, want *UnknownRefError", ref, err)
			}
			if unknown.Source != u.FileURL() {
				t.Errorf("error names %q", unknown.Source)
			}
		})
	}
}

func TestFetchRejectsBadInput(t *testing.T) {
	for name, req := range map[string]FetchRequest{
		"bad ref":     {URL: "https://example.com/r.git", Ref: Ref{Tag: "a", Branch: "b"}, CacheDir: "x"},
		"bad semver":  {URL: "https://example.com/r.git", Ref: Ref{SemVer: ">=>1"}, CacheDir: "x"},
		"bad scheme":  {URL: "ftp://example.com/r.git", CacheDir: "x"},
		"no cache":    {URL: "https://example.com/r.git"},
		"not a URL":   {URL: "./local/dir", CacheDir: "x"},
		"short hash":  {URL: "https://example.com/r.git", Ref: Ref{Commit: "abc123"}, CacheDir: "x"},
		"branch name": {URL: "https://example.com/r.git", Ref: Ref{Branch: "a:b"}, CacheDir: "x"},
	} {
		if _, err := Fetch(context.Background(), req); err == nil {
			t.Errorf("%s: Fetch did not fail", name)
		}
	}
}

// The first fetch of a branch is shallow; a later one asks the server only
// for what it advertises when nothing changed, and brings only the new
// commit's objects when something did.
func TestFetchIncrementalOverHTTP(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"app/version.yaml": "1\n"})
	c2 := u.Push(t, map[string]string{"app/version.yaml": "2\n"}, "two")
	srv := gittest.Serve(t, u, gittest.ServerOptions{})
	cache := t.TempDir()
	req := FetchRequest{URL: srv.RepoURL(), Ref: Ref{Branch: "main"}, CacheDir: cache}

	tree, err := Fetch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Revision != "main@sha1:"+c2 {
		t.Fatalf("Revision = %s", tree.Revision)
	}
	if got := srv.TakeRequests(); !containsRequest(got, "POST /project.git/git-upload-pack") {
		t.Errorf("first fetch made no upload-pack request: %v", got)
	}
	repoDir := onlyCacheRepo(t, cache)
	if _, err := os.Stat(filepath.Join(repoDir, "shallow")); err != nil {
		t.Errorf("first fetch is not shallow: %v", err)
	}
	parent := gittest.Git(t, u.Work, "rev-parse", "HEAD~1")
	if hasObject(t, repoDir, parent) {
		t.Error("the shallow cache holds the parent commit")
	}
	packsBefore := packFiles(t, repoDir)

	// Nothing changed: only the ref advertisement is read.
	again, err := Fetch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.TakeRequests(); containsRequest(got, "POST /project.git/git-upload-pack") {
		t.Errorf("an up-to-date fetch downloaded again: %v", got)
	}
	if again.Revision != tree.Revision {
		t.Errorf("Revision moved to %s", again.Revision)
	}

	// A commit pushed while the test runs.
	c3 := u.Push(t, map[string]string{"app/version.yaml": "3\n", "app/new.yaml": "new\n"}, "three")
	tree3, err := Fetch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if tree3.Revision != "main@sha1:"+c3 || mustRead(t, tree3, "app/new.yaml") != "new\n" {
		t.Errorf("after a push: Revision %s", tree3.Revision)
	}
	packsAfter := packFiles(t, repoDir)
	for _, p := range packsBefore {
		if !containsRequest(packsAfter, p) {
			t.Errorf("pack %s of the first fetch is gone: the cache was fetched again from scratch", p)
		}
	}
	if len(packsAfter) != len(packsBefore)+1 {
		t.Errorf("packs before %v, after %v: want exactly one new pack", packsBefore, packsAfter)
	}
	// The tree read before stays as it was: a snapshot.
	if got := mustRead(t, tree, "app/version.yaml"); got != "2\n" {
		t.Errorf("an earlier tree changed: %q", got)
	}
}

// A pinned commit is fetched with its history once and then read from the
// cache without the server.
func TestFetchCommitFromCacheWhenServerIsGone(t *testing.T) {
	u, h := releases(t)
	srv := gittest.Serve(t, u, gittest.ServerOptions{})
	cache := t.TempDir()
	req := FetchRequest{URL: srv.RepoURL(), Ref: Ref{Commit: h["v1.0.0"]}, CacheDir: cache}
	if _, err := Fetch(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	tree, err := Fetch(context.Background(), req)
	if err != nil {
		t.Fatalf("fetching a cached commit needed the server: %v", err)
	}
	if mustRead(t, tree, "app/version.yaml") != "v1.0.0\n" {
		t.Error("wrong content")
	}
	if _, err := os.Stat(filepath.Join(onlyCacheRepo(t, cache), "shallow")); err == nil {
		t.Error("a commit's cache is shallow")
	}
}

func TestFetchServerGone(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a\n"})
	srv := gittest.Serve(t, u, gittest.ServerOptions{})
	cache := t.TempDir()
	req := FetchRequest{URL: srv.RepoURL(), CacheDir: cache}
	good, err := Fetch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()

	_, err = Fetch(context.Background(), req)
	var unreachable *UnreachableError
	if !errors.As(err, &unreachable) {
		t.Fatalf("Fetch from a closed server = %v, want *UnreachableError", err)
	}
	if unreachable.URL != srv.RepoURL() || !strings.Contains(err.Error(), srv.RepoURL()) || errors.Unwrap(err) == nil {
		t.Errorf("error %q must name the URL and keep its cause", err)
	}
	// The last good tree is untouched, and so is the cache.
	if mustRead(t, good, "a.yaml") != "a\n" {
		t.Error("last good tree changed")
	}
	if _, err := os.Stat(filepath.Join(onlyCacheRepo(t, cache), "HEAD")); err != nil {
		t.Errorf("a failed fetch damaged the cache: %v", err)
	}

	_, err = Fetch(context.Background(), FetchRequest{URL: "http://" + closedPort(t) + "/r.git", CacheDir: cache})
	if !errors.As(err, &unreachable) {
		t.Errorf("Fetch from a closed port = %v, want *UnreachableError", err)
	}
	_, err = Fetch(context.Background(), FetchRequest{URL: "ssh://git@" + closedPort(t) + "/r.git", CacheDir: cache,
		Credentials: &Credentials{SSHKey: newSSHKey(t).pem, InsecureIgnoreHostKey: true}})
	if !errors.As(err, &unreachable) {
		t.Errorf("ssh Fetch from a closed port = %v, want *UnreachableError", err)
	}
}

// A server that accepts the connection and never answers cannot hold a
// fetch past its context's deadline, over http or ssh (where go-git's own
// handshake has no deadline: see ssh_dial.go).
func TestFetchHonoursDeadline(t *testing.T) {
	for name, req := range map[string]FetchRequest{
		"http": {URL: hangingServer(t)},
		"ssh": {URL: "ssh://git@" + silentTCPServer(t) + "/project.git",
			Credentials: &Credentials{SSHKey: newSSHKey(t).pem, InsecureIgnoreHostKey: true}},
	} {
		t.Run(name, func(t *testing.T) {
			req.CacheDir = t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := Fetch(ctx, req)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("Fetch ignored its context's deadline")
			}
			var unreachable *UnreachableError
			if !errors.As(err, &unreachable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Fetch from a silent server = %v, want *UnreachableError wrapping the deadline", err)
			}
		})
	}
}

func TestFetchNotARepository(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a\n"})
	srv := gittest.Serve(t, u, gittest.ServerOptions{})
	for _, url := range []string{srv.URL + "/missing.git", "file://" + filepath.Join(u.Root, "missing.git")} {
		_, err := Fetch(context.Background(), FetchRequest{URL: url, CacheDir: t.TempDir()})
		var notRepo *NotRepositoryError
		if !errors.As(err, &notRepo) || notRepo.Source != url {
			t.Errorf("Fetch(%s) = %v, want *NotRepositoryError naming it", url, err)
		}
	}
}

func TestFetchBasicAuthOverTLS(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a\n"})
	srv := gittest.Serve(t, u, gittest.ServerOptions{TLS: true, Username: testUser, Password: testPassword})
	ca := srv.CABundle()
	tests := []struct {
		name    string
		creds   *Credentials
		wantErr bool
	}{
		{"right password", &Credentials{Username: testUser, Password: testPassword, CABundle: ca}, false},
		{"wrong password", &Credentials{Username: testUser, Password: "wrong-" + testPassword, CABundle: ca}, true},
		{"wrong user", &Credentials{Username: "someone", Password: testPassword, CABundle: ca}, true},
		{"no credentials", &Credentials{CABundle: ca}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			tree, err := Fetch(context.Background(), FetchRequest{URL: srv.RepoURL(), Credentials: tc.creds, CacheDir: cache})
			if !tc.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				if mustRead(t, tree, "a.yaml") != "a\n" {
					t.Error("content")
				}
				assertNoSecretOnDisk(t, cache, testPassword)
				return
			}
			var authErr *AuthError
			if !errors.As(err, &authErr) {
				t.Fatalf("Fetch = %v, want *AuthError", err)
			}
			if strings.Contains(err.Error(), testPassword) || strings.Contains(fmt.Sprintf("%+v %#v", err, tc.creds), testPassword) {
				t.Errorf("the error or credentials print the password: %v", err)
			}
			if !strings.Contains(err.Error(), srv.RepoURL()) {
				t.Errorf("error %q does not name the URL", err)
			}
		})
	}
}

// A server whose certificate is not trusted is reachable: the error is a
// configuration problem, not an outage.
func TestFetchUntrustedCertificate(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a\n"})
	srv := gittest.Serve(t, u, gittest.ServerOptions{TLS: true})
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	_, err := Fetch(context.Background(), FetchRequest{URL: srv.RepoURL(), CacheDir: t.TempDir()})
	var unreachable *UnreachableError
	if err == nil || errors.As(err, &unreachable) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Fetch from an untrusted server = %v, want a certificate error that is not *UnreachableError", err)
	}
}

// Credentials in the URL are used, never stored, never shown; and they are
// not sent over plain http unless allowed.
func TestFetchCredentialsInURL(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a\n"})
	srv := gittest.Serve(t, u, gittest.ServerOptions{Username: testUser, Password: testPassword})
	withCreds := strings.Replace(srv.RepoURL(), "http://", "http://"+testUser+":"+testPassword+"@", 1)
	cache := t.TempDir()

	_, err := Fetch(context.Background(), FetchRequest{URL: withCreds, CacheDir: cache})
	var authErr *AuthError
	if !errors.As(err, &authErr) || strings.Contains(err.Error(), testPassword) {
		t.Fatalf("credentials over plain http = %v, want a refusal without the password", err)
	}

	tree, err := Fetch(context.Background(), FetchRequest{URL: withCreds, CacheDir: cache, AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Source != srv.RepoURL() {
		t.Errorf("Source = %q, want the URL without credentials", tree.Source)
	}
	assertNoSecretOnDisk(t, cache, testPassword)

	badURL := strings.Replace(withCreds, testPassword, "wrong-"+testPassword, 1)
	_, err = Fetch(context.Background(), FetchRequest{URL: badURL, CacheDir: cache, AllowInsecureHTTP: true})
	if !errors.As(err, &authErr) || strings.Contains(err.Error(), testPassword) {
		t.Errorf("bad credentials in the URL = %v", err)
	}
}

func TestFetchOverSSH(t *testing.T) {
	u, h := releases(t)
	client := newSSHKey(t)
	srv := newSSHGitServer(t, u, client.signer.PublicKey())
	intruder := newSSHKey(t)
	otherHost := newSSHKey(t)
	tests := []struct {
		name     string
		creds    func(t *testing.T) *Credentials
		wantAuth bool
	}{
		{"key", func(*testing.T) *Credentials {
			return &Credentials{SSHKey: client.pem, KnownHosts: srv.knownHosts()}
		}, false},
		{"agent", func(t *testing.T) *Credentials {
			return &Credentials{SSHAgentSocket: serveAgent(t, client), KnownHosts: srv.knownHosts()}
		}, false},
		{"key from the environment", func(t *testing.T) *Credentials {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"id": string(client.pem), "known_hosts": string(srv.knownHosts())})
			env := map[string]string{EnvSSHKey: filepath.Join(dir, "id"), EnvSSHKnownHosts: filepath.Join(dir, "known_hosts")}
			c, err := CredentialsFromEnv(srv.RepoURL(), func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			return c
		}, false},
		{"unauthorized key", func(*testing.T) *Credentials {
			return &Credentials{SSHKey: intruder.pem, KnownHosts: srv.knownHosts()}
		}, true},
		{"host key not known", func(*testing.T) *Credentials {
			return &Credentials{SSHKey: client.pem, KnownHosts: knownHostsLine("127.0.0.1:1", srv.hostKey)}
		}, true},
		{"host key changed", func(*testing.T) *Credentials {
			return &Credentials{SSHKey: client.pem, KnownHosts: knownHostsLine(srv.addr, otherHost)}
		}, true},
		{"no known_hosts", func(*testing.T) *Credentials {
			return &Credentials{SSHKey: client.pem}
		}, true},
		{"no key", func(*testing.T) *Credentials {
			return &Credentials{KnownHosts: srv.knownHosts()}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tree, err := Fetch(ctx, FetchRequest{URL: srv.RepoURL(), Ref: Ref{Tag: "v1.1.0"}, Credentials: tc.creds(t), CacheDir: t.TempDir()})
			if tc.wantAuth {
				var authErr *AuthError
				if !errors.As(err, &authErr) {
					t.Fatalf("Fetch = %v, want *AuthError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tree.Revision != "v1.1.0@sha1:"+h["v1.1.0"] || mustRead(t, tree, "app/version.yaml") != "v1.1.0\n" {
				t.Errorf("Revision %s", tree.Revision)
			}
		})
	}
}

func TestFetchConcurrentlyIntoOneCache(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a\n"})
	want := u.Head(t)
	cache := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	revs := make([]string, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tree, err := Fetch(context.Background(), FetchRequest{URL: u.FileURL(), CacheDir: cache})
			errs[i] = err
			if err == nil {
				revs[i] = tree.Revision
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("fetch %d: %v", i, err)
		} else if revs[i] != "main@sha1:"+want {
			t.Errorf("fetch %d: Revision %s", i, revs[i])
		}
	}
}

func TestFetchRecoversFromBrokenCache(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"a.yaml": "a\n"})
	breakages := map[string]func(t *testing.T, repoDir string){
		// Objects lost, as an interrupted write or a full disk might leave them.
		"objects lost": func(t *testing.T, repoDir string) {
			if err := os.RemoveAll(filepath.Join(repoDir, "objects")); err != nil {
				t.Fatal(err)
			}
		},
		// A pack whose bytes went bad.
		"pack corrupted": func(t *testing.T, repoDir string) {
			for _, p := range packFiles(t, repoDir) {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				for i := 12; i < len(data)-20; i++ {
					data[i] ^= 0xff
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	for name, breakCache := range breakages {
		for _, pushed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, new commit %v", name, pushed), func(t *testing.T) {
				cache := t.TempDir()
				req := FetchRequest{URL: u.FileURL(), CacheDir: cache}
				if _, err := Fetch(context.Background(), req); err != nil {
					t.Fatal(err)
				}
				breakCache(t, onlyCacheRepo(t, cache))
				want := u.Head(t)
				if pushed {
					want = u.Push(t, map[string]string{"a.yaml": "b-" + want + "\n"}, "b")
				}
				tree, err := Fetch(context.Background(), req)
				if err != nil {
					t.Fatalf("Fetch into a broken cache: %v", err)
				}
				if tree.Revision != "main@sha1:"+want {
					t.Errorf("Revision %s, want main@sha1:%s", tree.Revision, want)
				}
				if _, err := tree.FS.ReadFile("a.yaml"); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

func TestFetchedTreeIsConfined(t *testing.T) {
	u := gittest.NewUpstream(t, map[string]string{"ok.yaml": "ok\n", "out": "-> ../../etc/passwd", "big": strings.Repeat("z", 100)})
	tree, err := Fetch(context.Background(), FetchRequest{URL: u.FileURL(), CacheDir: t.TempDir(), Limits: Limits{MaxFileSize: 50}})
	if err != nil {
		t.Fatal(err)
	}
	var escape *PathEscapeError
	if _, err := tree.FS.ReadFile("out"); !errors.As(err, &escape) {
		t.Errorf("ReadFile(out) = %v, want *PathEscapeError", err)
	}
	var tooBig *FileTooLargeError
	if _, err := tree.FS.ReadFile("big"); !errors.As(err, &tooBig) || tooBig.Size != 100 {
		t.Errorf("ReadFile(big) = %v, want *FileTooLargeError of 100 bytes", err)
	}
}

func TestCacheLockAcrossOpenFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "repo.lock")
	unlock, err := lockFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	// flock is per open file: a second open waits as another process would.
	if _, err := lockFile(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock = %v, want to wait until the deadline", err)
	}
	unlock()
	unlock2, err := lockFile(context.Background(), p)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

func containsRequest(list []string, want string) bool {
	for _, r := range list {
		if r == want {
			return true
		}
	}
	return false
}

// onlyCacheRepo returns the one repository directory in a cache.
func onlyCacheRepo(t *testing.T, cache string) string {
	t.Helper()
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(cache, e.Name()))
		}
	}
	if len(dirs) != 1 {
		t.Fatalf("cache holds %v, want one repository", dirs)
	}
	return dirs[0]
}

func packFiles(t *testing.T, repoDir string) []string {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(repoDir, "objects", "pack", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(packs)
	return packs
}

func hasObject(t *testing.T, repoDir, hash string) bool {
	t.Helper()
	cmd := exec.Command("git", "--git-dir", repoDir, "cat-file", "-e", hash)
	cmd.Env = gittest.Env()
	return cmd.Run() == nil
}

// assertNoSecretOnDisk fails if any file of the cache holds the secret.
func assertNoSecretOnDisk(t *testing.T, cache, secret string) {
	t.Helper()
	err := filepath.Walk(cache, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), secret) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
