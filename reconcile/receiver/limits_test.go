package receiver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
)

// clock is a clock a test moves by hand.
type clock struct{ now atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.now.Store(time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) Now() time.Time      { return time.Unix(0, c.now.Load()) }
func (c *clock) Add(d time.Duration) { c.now.Add(int64(d)) }
func (s *server) triggers() int      { s.mu.Lock(); defer s.mu.Unlock(); return len(s.triggered) }
func (s *server) logged() string     { s.mu.Lock(); defer s.mu.Unlock(); return s.logs.String() }
func signed(key string, body []byte) map[string]string {
	return map[string]string{GitHubSignatureHeader: githubSignature([]byte(key), body)}
}

// TestKeyPerProvider: a Secret with a key per provider verifies GitHub's signatures with
// github-token alone and GitLab's token with gitlab-token alone, so that the GitLab token
// (sent in the clear in every request) cannot sign a GitHub delivery. A Secret with only
// the old key "token" still serves both, and the log says it is deprecated; a provider's
// own key wins over it.
func TestKeyPerProvider(t *testing.T) {
	env := testenv.Get(t)
	ns := fixture(t, env)
	const github, gitlab = "github-hmac-key-1b2c", "gitlab-token-9f8e"
	mustCreate(t, env, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "per-provider"},
		Data: map[string][]byte{"github-token": []byte(github), "gitlab-token": []byte(gitlab), "token": []byte(token)}})
	mustCreate(t, env, &olmsyncv1alpha1.Sync{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "split"},
		Spec: olmsyncv1alpha1.SyncSpec{
			Source:   olmsyncv1alpha1.GitSource{URL: "https://git.example.com/c.git", Interval: metav1.Duration{Duration: time.Minute}},
			Interval: metav1.Duration{Duration: 10 * time.Minute},
			Webhook:  &olmsyncv1alpha1.WebhookSpec{SecretRef: olmsyncv1alpha1.LocalObjectReference{Name: "per-provider"}},
		},
	})
	srv := newServer(t, env, nil)
	body := func(i int) []byte { return []byte(fmt.Sprintf(`{"ref":"refs/heads/main","n":%d}`, i)) }
	for i, tc := range []struct {
		name    string
		sync    string
		headers func(b []byte) map[string]string
		want    int
	}{
		{"github signed with github-token", "split", func(b []byte) map[string]string { return signed(github, b) }, http.StatusAccepted},
		{"github signed with the gitlab token", "split", func(b []byte) map[string]string { return signed(gitlab, b) }, http.StatusUnauthorized},
		{"github signed with the old key beside its own", "split", func(b []byte) map[string]string { return signed(token, b) }, http.StatusUnauthorized},
		{"gitlab-token", "split", func([]byte) map[string]string { return map[string]string{GitLabTokenHeader: gitlab} }, http.StatusAccepted},
		{"gitlab with the github key", "split", func([]byte) map[string]string { return map[string]string{GitLabTokenHeader: github} }, http.StatusUnauthorized},
		{"old key, github", "platform", func(b []byte) map[string]string { return signed(token, b) }, http.StatusAccepted},
		{"old key, gitlab", "platform", func([]byte) map[string]string { return map[string]string{GitLabTokenHeader: token} }, http.StatusAccepted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := body(i)
			if code, msg := srv.post(t, "/hooks/"+ns+"/"+tc.sync, tc.headers(b), b); code != tc.want {
				t.Errorf("status %d (%q), want %d", code, msg, tc.want)
			}
		})
	}
	logs := srv.logged()
	if !strings.Contains(logs, `deprecated: the webhook Secret's key \"token\" serves every provider`) || !strings.Contains(logs, ns+"/hook-token") {
		t.Errorf("no deprecation warning naming the Secret:\n%s", logs)
	}
	if n := strings.Count(logs, "deprecated"); n != 1 {
		t.Errorf("%d deprecation warnings, want one (for the one version of the one Secret with only the old key):\n%s", n, logs)
	}
	for _, secret := range []string{github, gitlab, token} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log shows a secret:\n%s", logs)
		}
	}
}

// TestReplayedDelivery: a verified delivery asks for one reconcile. The same delivery
// again — by its delivery ID, or by its body with the ID changed or left out — is
// answered 200 and asks for nothing, for the replay window; after it, it is new again.
// A request that fails verification remembers nothing.
func TestReplayedDelivery(t *testing.T) {
	env := testenv.Get(t)
	ns := fixture(t, env)
	clk := newClock()
	srv := newServerWith(t, env, nil, Options{RatePerMinute: -1, ReplayWindow: time.Hour, Now: clk.Now})
	hook := "/hooks/" + ns + "/platform"
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	other := []byte(`{"ref":"refs/heads/main","after":"0000000000000000000000000000000000000001"}`)
	steps := []struct {
		name     string
		headers  map[string]string
		body     []byte
		advance  time.Duration
		want     int
		triggers int
	}{
		{"a forged request carrying the delivery ID to come", with(signed("guess", pushPayload), "X-GitHub-Delivery", "d-1"), pushPayload, 0, http.StatusUnauthorized, 0},
		{"the delivery", with(signed(token, pushPayload), "X-GitHub-Delivery", "d-1"), pushPayload, 0, http.StatusAccepted, 1},
		{"the same delivery again", with(signed(token, pushPayload), "X-GitHub-Delivery", "d-1"), pushPayload, time.Minute, http.StatusOK, 1},
		{"its body under a new delivery ID", with(signed(token, pushPayload), "X-GitHub-Delivery", "d-2"), pushPayload, 0, http.StatusOK, 1},
		{"its body without a delivery ID", signed(token, pushPayload), pushPayload, 0, http.StatusOK, 1},
		{"another body under the same delivery ID", with(signed(token, other), "X-GitHub-Delivery", "d-1"), other, 0, http.StatusOK, 1},
		{"a GitLab delivery", map[string]string{GitLabTokenHeader: token, "X-Gitlab-Event-UUID": "g-1"}, gitlabPayload, 0, http.StatusAccepted, 2},
		{"the GitLab delivery again", map[string]string{GitLabTokenHeader: token, "X-Gitlab-Event-UUID": "g-1"}, []byte(`{"x":1}`), 0, http.StatusOK, 2},
		{"the first delivery after the window", with(signed(token, pushPayload), "X-GitHub-Delivery", "d-1"), pushPayload, time.Hour, http.StatusAccepted, 3},
	}
	for _, st := range steps {
		clk.Add(st.advance)
		code, msg := srv.post(t, hook, st.headers, st.body)
		if code != st.want || srv.triggers() != st.triggers {
			t.Errorf("%s: status %d (%q), %d reconcile(s) asked; want %d and %d", st.name, code, msg, srv.triggers(), st.want, st.triggers)
		}
	}
}

// TestRateLimitPerSource: a source over its rate is answered 429 with Retry-After before
// its body is read or anything is looked up; another source is not held up by it.
func TestRateLimitPerSource(t *testing.T) {
	env := testenv.Get(t)
	ns := fixture(t, env)
	clk := newClock()
	srv := newServerWith(t, env, nil, Options{RatePerMinute: 6, Burst: 2, Now: clk.Now})
	lookups := &countingReader{Reader: srv.handler.Reader}
	srv.handler.Reader = lookups
	post := func(from string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/hooks/"+ns+"/platform", bytes.NewReader(pushPayload))
		r.RemoteAddr = from + ":40000"
		r.Header.Set(GitLabTokenHeader, "guess")
		w := httptest.NewRecorder()
		srv.handler.ServeHTTP(w, r)
		return w
	}
	for i := range 2 {
		if w := post("192.0.2.1"); w.Code != http.StatusUnauthorized {
			t.Fatalf("request %d within the burst: status %d", i, w.Code)
		}
	}
	before := lookups.calls.Load()
	w := post("192.0.2.1")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "11" {
		t.Errorf("over the rate: status %d, Retry-After %q; want 429 and 11 (a token every 10 s)", w.Code, w.Header().Get("Retry-After"))
	}
	if lookups.calls.Load() != before {
		t.Error("a request over the rate was looked up")
	}
	if w := post("198.51.100.7"); w.Code != http.StatusUnauthorized {
		t.Errorf("another source: status %d, want 401 (not limited)", w.Code)
	}
	clk.Add(10 * time.Second)
	if w := post("192.0.2.1"); w.Code != http.StatusUnauthorized {
		t.Errorf("10 s later: status %d, want a token again", w.Code)
	}
}

// countingReader counts the lookups the handler makes.
type countingReader struct {
	client.Reader
	calls atomic.Int64
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.calls.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.calls.Add(1)
	return c.Reader.List(ctx, list, opts...)
}

// TestLookupsFromTheCache: requests, refused or not, read nothing from the API server: the
// Sync and its Secret come from the cache.
func TestLookupsFromTheCache(t *testing.T) {
	env := testenv.Get(t)
	ns := fixture(t, env)
	requests := &atomic.Int64{}
	h := &Handler{Reader: cachedReader(t, env, requests), Trigger: func(context.Context, types.NamespacedName) error { return nil },
		Options: Options{RatePerMinute: -1}}
	srv := httptest.NewServer(NewServer("", h, Timeouts{}).Handler)
	t.Cleanup(srv.Close)
	s := &server{Server: srv, handler: h}
	before := requests.Load()
	for i := range 50 {
		s.post(t, "/hooks/"+ns+"/platform", map[string]string{GitLabTokenHeader: fmt.Sprintf("guess-%d", i)}, pushPayload)
		s.post(t, "/hooks/"+ns+"/nobody", map[string]string{GitLabTokenHeader: token}, pushPayload)
	}
	if code, _ := s.post(t, "/hooks/"+ns+"/platform", map[string]string{GitLabTokenHeader: token}, pushPayload); code != http.StatusAccepted {
		t.Fatalf("the verified request: status %d", code)
	}
	if n := requests.Load() - before; n != 0 {
		t.Errorf("101 requests made %d request(s) to the API server, want none", n)
	}
}

// TestTrickledBodyClosed: a request whose body comes a byte at a time cannot hold a
// connection: the server's read timeout closes it, and nothing is asked.
func TestTrickledBodyClosed(t *testing.T) {
	env := testenv.Get(t)
	ns := fixture(t, env)
	var triggered atomic.Int32
	h := &Handler{Reader: cachedReader(t, env, nil), Trigger: func(context.Context, types.NamespacedName) error { triggered.Add(1); return nil }}
	srv := NewServer("127.0.0.1:0", h, Timeouts{Read: 2 * time.Second})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /hooks/%s/platform HTTP/1.1\r\nHost: olmsync\r\n%s: %s\r\nContent-Length: %d\r\n\r\n", ns, GitLabTokenHeader, token, MaxBodyBytes)
	closed := make(chan time.Duration, 1)
	go func() {
		_, _ = io.Copy(io.Discard, conn) // returns when the server closes the connection
		closed <- time.Since(start)
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for sent := 0; ; sent++ {
		select {
		case took := <-closed:
			t.Logf("trickled body: connection closed by the server after %s, %d bytes sent", took.Round(10*time.Millisecond), sent)
			if triggered.Load() != 0 {
				t.Error("a trickled request asked for a reconcile")
			}
			return
		case <-tick.C:
			if _, err := conn.Write([]byte("a")); err != nil {
				select {
				case took := <-closed:
					t.Logf("trickled body: connection closed by the server after %s, %d bytes sent", took.Round(10*time.Millisecond), sent)
				default:
					t.Logf("trickled body: write refused after %s, %d bytes sent", time.Since(start).Round(10*time.Millisecond), sent)
				}
				return
			}
			if sent > 600 {
				t.Fatalf("the connection is still open after %d bytes trickled over %s", sent, time.Since(start))
			}
		}
	}
}

// TestLimiterSweep: the sources remembered stay bounded, however many there are; when
// every one remembered is limited, none is forgotten, and a new source waits until the
// first of them has a token again.
func TestLimiterSweep(t *testing.T) {
	clk := newClock()
	l := newLimiter(60, 5, clk.Now)
	addr := func(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }
	for i := range maxRemembered + 10 {
		l.allow(addr(i))
		clk.Add(time.Millisecond)
	}
	if n := len(l.sources); n > maxRemembered {
		t.Errorf("%d sources remembered, more than %d", n, maxRemembered)
	}

	clk.Add(time.Hour)
	l = newLimiter(60, 5, clk.Now)
	for i := range maxRemembered {
		for range 6 {
			l.allow(addr(i)) // its burst, and one refused: limited
		}
	}
	wait, ok := l.allow("192.0.2.1")
	if ok || wait <= 0 || wait > time.Second {
		t.Errorf("a new source while every one remembered is limited: allowed %v, wait %s; want refused for at most a second", ok, wait)
	}
	if _, ok := l.allow(addr(0)); ok {
		t.Error("a limited source was forgotten to make room")
	}
	clk.Add(time.Second) // a token each
	if _, ok := l.allow("192.0.2.1"); !ok {
		t.Error("a new source refused once the sources remembered have a token again")
	}
	if n := len(l.sources); n > maxRemembered {
		t.Errorf("%d sources remembered, more than %d", n, maxRemembered)
	}
}

// TestRateLimitHoldsUnderAFlood (issue 30): 10,100 requests from as many addresses wiped
// the limiter's memory, so that an address answered 429 was answered 401 right after.
// Now the flood makes it forget sources that are not limited: the limited address is
// still answered 429, a new one is served, and no more than maxRemembered sources are
// remembered. Addresses of one IPv6 /64, which one client holds, share a bucket.
func TestRateLimitHoldsUnderAFlood(t *testing.T) {
	env := testenv.Get(t)
	ns := fixture(t, env)
	clk := newClock()
	srv := newServerWith(t, env, nil, Options{RatePerMinute: 6, Burst: 2, Now: clk.Now})
	post := func(from string) int {
		r := httptest.NewRequest(http.MethodPost, "/hooks/"+ns+"/platform", bytes.NewReader(pushPayload))
		r.RemoteAddr = net.JoinHostPort(from, "40000")
		r.Header.Set(GitLabTokenHeader, "guess")
		w := httptest.NewRecorder()
		srv.handler.ServeHTTP(w, r)
		return w.Code
	}
	for range 3 {
		post("192.0.2.1")
	}
	if code := post("192.0.2.1"); code != http.StatusTooManyRequests {
		t.Fatalf("past the burst: status %d, want 429", code)
	}
	for i := range maxRemembered + 100 {
		if code := post(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)); code != http.StatusUnauthorized {
			t.Fatalf("flood request %d: status %d, want 401", i, code)
		}
		if i%1000 == 0 {
			clk.Add(100 * time.Millisecond) // the flood takes a second: no token comes back
		}
	}
	if code := post("192.0.2.1"); code != http.StatusTooManyRequests {
		t.Errorf("the limited address after the flood: status %d, want 429", code)
	}
	if code := post("198.51.100.7"); code != http.StatusUnauthorized {
		t.Errorf("a new address after the flood: status %d, want 401", code)
	}
	if n := len(srv.handler.limiter.sources); n > maxRemembered {
		t.Errorf("%d sources remembered, more than %d", n, maxRemembered)
	}

	for i := range 3 {
		post(fmt.Sprintf("2001:db8:1:2::%x", i+1))
	}
	if code := post("2001:db8:1:2:ffff::9"); code != http.StatusTooManyRequests {
		t.Errorf("another address of the same /64 past its burst: status %d, want 429", code)
	}
	if code := post("2001:db8:1:3::1"); code != http.StatusUnauthorized {
		t.Errorf("an address of another /64: status %d, want 401", code)
	}
}
