package receiver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

const token = "s3cr3t-webhook-token"

// A push event as GitHub sends it (shortened).
var pushPayload = []byte(`{"ref":"refs/heads/main","after":"9fceb02d0ae598e95dc970b74767f19372d61af8","repository":{"full_name":"platform/clusters"}}`)

// A push event as GitLab sends it (shortened).
var gitlabPayload = []byte(`{"object_kind":"push","ref":"refs/heads/main","after":"da1560886d4f094c3e6c9ef40349f7d38b5d27d7"}`)

func githubSignature(key, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func TestVerify(t *testing.T) {
	good := githubSignature([]byte(token), pushPayload)
	for _, tc := range []struct {
		name    string
		token   string
		headers map[string]string
		body    []byte
		wantErr string
	}{
		{"github signature", token, map[string]string{GitHubSignatureHeader: good}, pushPayload, ""},
		{"gitlab token", token, map[string]string{GitLabTokenHeader: token}, pushPayload, ""},
		{"github signature of another body", token, map[string]string{GitHubSignatureHeader: good}, append(bytes.Clone(pushPayload), ' '), "does not match the payload"},
		{"github signature under another key", token, map[string]string{GitHubSignatureHeader: githubSignature([]byte("other"), pushPayload)}, pushPayload, "does not match"},
		{"github sha1 signature", token, map[string]string{GitHubSignatureHeader: "sha1=" + strings.Repeat("0", 40)}, pushPayload, "is not sha256=<hex>"},
		{"github signature not hex", token, map[string]string{GitHubSignatureHeader: "sha256=zz"}, pushPayload, "is not sha256=<hex>"},
		{"github signature truncated", token, map[string]string{GitHubSignatureHeader: good[:21]}, pushPayload, "does not match"},
		{"a wrong github signature is not saved by a right gitlab token", token, map[string]string{GitHubSignatureHeader: "sha256=00", GitLabTokenHeader: token}, pushPayload, "does not match"},
		{"gitlab token wrong", token, map[string]string{GitLabTokenHeader: token + "x"}, pushPayload, "does not match"},
		{"gitlab token prefix", token, map[string]string{GitLabTokenHeader: token[:5]}, pushPayload, "does not match"},
		{"nothing to verify", token, nil, pushPayload, "neither"},
		{"empty token never verifies", "", map[string]string{GitHubSignatureHeader: githubSignature(nil, pushPayload)}, pushPayload, "no token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			err := Verify([]byte(tc.token), h, tc.body)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Verify() = %v, want nil", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Verify() = %v, want an error containing %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

func TestSyncOf(t *testing.T) {
	for _, tc := range []struct {
		path string
		want types.NamespacedName
		ok   bool
	}{
		{"/hooks/flux-system/platform", types.NamespacedName{Namespace: "flux-system", Name: "platform"}, true},
		{"/hooks/ns/a.b-c/", types.NamespacedName{Namespace: "ns", Name: "a.b-c"}, true},
		{"/hooks/ns", types.NamespacedName{}, false},
		{"/hooks/ns/a/b", types.NamespacedName{}, false},
		{"/hooks/NS/a", types.NamespacedName{}, false},
		{"/hooks/../secrets", types.NamespacedName{}, false},
		{"/other/ns/a", types.NamespacedName{}, false},
	} {
		got, ok := syncOf(tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("syncOf(%q) = %v, %v; want %v, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}

var fixtures atomic.Int32

// fixture creates a namespace with a Sync whose webhook uses a Secret holding token, and
// a Sync without a webhook.
func fixture(t *testing.T, env *testenv.Env) string {
	t.Helper()
	ns := fmt.Sprintf("hooks-%d-%d", time.Now().UnixNano()%1000000, fixtures.Add(1))
	mustCreate(t, env, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	mustCreate(t, env, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook-token"}, Data: map[string][]byte{"token": []byte(token)}})
	mustCreate(t, env, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "empty-token"}, Data: map[string][]byte{"token": nil}})
	for name, secret := range map[string]string{"platform": "hook-token", "no-webhook": "", "empty": "empty-token", "lost-secret": "gone"} {
		s := &olmsyncv1alpha1.Sync{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: olmsyncv1alpha1.SyncSpec{
				Source:   olmsyncv1alpha1.GitSource{URL: "https://git.example.com/platform/clusters.git", Interval: metav1.Duration{Duration: time.Minute}},
				Interval: metav1.Duration{Duration: 10 * time.Minute},
			},
		}
		if secret != "" {
			s.Spec.Webhook = &olmsyncv1alpha1.WebhookSpec{SecretRef: olmsyncv1alpha1.LocalObjectReference{Name: secret}}
		}
		mustCreate(t, env, s)
	}
	return ns
}

func mustCreate(t *testing.T, env *testenv.Env, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// server is the receiver on loopback, with a trigger that records what it was asked.
type server struct {
	*httptest.Server
	handler   *Handler
	mu        sync.Mutex
	triggered []types.NamespacedName
	logs      strings.Builder
}

func newServer(t *testing.T, env *testenv.Env, trigger Trigger) *server {
	return newServerWith(t, env, trigger, Options{RatePerMinute: -1})
}

// cachedReader is a cache of the control plane as the manager's: Secrets transformed,
// Syncs indexed by their webhook path. requests, when not nil, counts what it asks of the
// API server.
func cachedReader(t *testing.T, env *testenv.Env, requests *atomic.Int64) client.Reader {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	if requests != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				return rt.RoundTrip(r)
			})
		})
	}
	c, err := cache.New(cfg, cache.Options{Scheme: env.Scheme, ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Transform: SecretCacheTransform},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := c.IndexField(ctx, &olmsyncv1alpha1.Sync{}, WebhookPathIndex, IndexWebhookPath); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	// The informers the receiver reads, started and synced before the first request.
	for _, obj := range []client.Object{&olmsyncv1alpha1.Sync{}, &corev1.Secret{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	return c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func newServerWith(t *testing.T, env *testenv.Env, trigger Trigger, opts Options) *server {
	s := &server{}
	record := func(ctx context.Context, key types.NamespacedName) error {
		s.mu.Lock()
		s.triggered = append(s.triggered, key)
		s.mu.Unlock()
		if trigger != nil {
			return trigger(ctx, key)
		}
		return nil
	}
	log := funcr.New(func(prefix, args string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.logs.WriteString(args + "\n")
	}, funcr.Options{})
	mux := http.NewServeMux()
	s.handler = &Handler{Reader: cachedReader(t, env, nil), Trigger: record, Log: log, Options: opts}
	mux.Handle(PathPrefix, s.handler)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *server) post(t *testing.T, path string, headers map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHandler(t *testing.T) {
	env := testenv.Get(t)
	ns := fixture(t, env)
	srv := newServer(t, env, nil)
	good := githubSignature([]byte(token), pushPayload)
	hook := "/hooks/" + ns + "/"
	for _, tc := range []struct {
		name     string
		path     string
		headers  map[string]string
		body     []byte
		want     int
		triggers bool
	}{
		{"github push", hook + "platform", map[string]string{GitHubSignatureHeader: good, "X-GitHub-Event": "push"}, pushPayload, http.StatusAccepted, true},
		{"gitlab push", hook + "platform", map[string]string{GitLabTokenHeader: token, "X-Gitlab-Event": "Push Hook"}, gitlabPayload, http.StatusAccepted, true},
		{"bad github signature", hook + "platform", map[string]string{GitHubSignatureHeader: githubSignature([]byte("guess"), pushPayload)}, pushPayload, http.StatusUnauthorized, false},
		{"signature of another payload", hook + "platform", map[string]string{GitHubSignatureHeader: good}, []byte(`{"ref":"refs/heads/evil"}`), http.StatusUnauthorized, false},
		{"bad gitlab token", hook + "platform", map[string]string{GitLabTokenHeader: "guess"}, pushPayload, http.StatusUnauthorized, false},
		{"unsigned", hook + "platform", nil, pushPayload, http.StatusUnauthorized, false},
		{"no such Sync: same answer as a bad signature", hook + "nobody", map[string]string{GitHubSignatureHeader: good}, pushPayload, http.StatusUnauthorized, false},
		{"Sync without a webhook", hook + "no-webhook", map[string]string{GitHubSignatureHeader: good}, pushPayload, http.StatusUnauthorized, false},
		{"empty token in the Secret", hook + "empty", map[string]string{GitHubSignatureHeader: githubSignature(nil, pushPayload)}, pushPayload, http.StatusUnauthorized, false},
		{"Secret missing", hook + "lost-secret", map[string]string{GitLabTokenHeader: token}, pushPayload, http.StatusUnauthorized, false},
		{"malformed path", "/hooks/" + ns, map[string]string{GitLabTokenHeader: token}, pushPayload, http.StatusNotFound, false},
		{"payload too large", hook + "platform", map[string]string{GitLabTokenHeader: token}, bytes.Repeat([]byte("a"), MaxBodyBytes+1), http.StatusRequestEntityTooLarge, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.mu.Lock()
			srv.triggered = nil
			srv.mu.Unlock()
			code, body := srv.post(t, tc.path, tc.headers, tc.body)
			if code != tc.want {
				t.Errorf("status %d (%q), want %d", code, body, tc.want)
			}
			if code == http.StatusUnauthorized && body != "unauthorized\n" {
				t.Errorf("refusal body %q says more than %q", body, "unauthorized")
			}
			srv.mu.Lock()
			got := srv.triggered
			srv.mu.Unlock()
			if tc.triggers && (len(got) != 1 || got[0] != (types.NamespacedName{Namespace: ns, Name: "platform"})) {
				t.Errorf("triggered %v, want %s/platform once", got, ns)
			}
			if !tc.triggers && len(got) != 0 {
				t.Errorf("triggered %v, want nothing", got)
			}
		})
	}
	srv.mu.Lock()
	logs := srv.logs.String()
	srv.mu.Unlock()
	if strings.Contains(logs, token) {
		t.Errorf("the log shows the token:\n%s", logs)
	}
	if !strings.Contains(logs, "does not match the payload") {
		t.Errorf("the log does not say why a request was refused:\n%s", logs)
	}

	req, _ := http.NewRequest(http.MethodGet, srv.URL+hook+"platform", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
}

func TestWebhookRequestsAReconcile(t *testing.T) {
	env := testenv.Get(t)
	ns := fixture(t, env)
	var calls atomic.Int32
	at := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	srv := newServer(t, env, RequestReconcile(env.Client, func() time.Time { calls.Add(1); return at }))

	code, body := srv.post(t, "/hooks/"+ns+"/platform", map[string]string{GitHubSignatureHeader: githubSignature([]byte(token), pushPayload)}, pushPayload)
	if code != http.StatusAccepted {
		t.Fatalf("status %d (%q), want 202", code, body)
	}
	got := &olmsyncv1alpha1.Sync{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "platform"}, got); err != nil {
		t.Fatal(err)
	}
	if v := got.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]; v != "2026-07-01T12:00:00Z" {
		t.Errorf("%s = %q, want the time of the request", olmsyncv1alpha1.ReconcileRequestAnnotation, v)
	}
	if got.Spec.Source.URL != "https://git.example.com/platform/clusters.git" {
		t.Errorf("the trigger changed the spec: %+v", got.Spec)
	}

	// A refused request annotates nothing.
	before := got.ResourceVersion
	code, _ = srv.post(t, "/hooks/"+ns+"/platform", map[string]string{GitLabTokenHeader: "guess"}, pushPayload)
	if code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", code)
	}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "platform"}, got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != before {
		t.Error("a refused request changed the Sync")
	}

	// A trigger that fails is a 500, not a 202.
	failing := newServer(t, env, func(context.Context, types.NamespacedName) error { return errors.New("api server down") })
	code, _ = failing.post(t, "/hooks/"+ns+"/platform", map[string]string{GitLabTokenHeader: token}, pushPayload)
	if code != http.StatusInternalServerError {
		t.Errorf("status %d with a failing trigger, want 500", code)
	}
}

func FuzzVerify(f *testing.F) {
	f.Add("sha256="+strings.Repeat("ab", 32), "", []byte("{}"))
	f.Add("", token, []byte("{}"))
	f.Add("sha256=zz", "x", []byte(nil))
	f.Fuzz(func(t *testing.T, sig, gitlab string, body []byte) {
		h := http.Header{}
		if sig != "" {
			h.Set(GitHubSignatureHeader, sig)
		}
		if gitlab != "" {
			h.Set(GitLabTokenHeader, gitlab)
		}
		err := Verify([]byte(token), h, body)
		// Only the right signature or the right token may pass.
		rightSignature := h.Get(GitHubSignatureHeader) == githubSignature([]byte(token), body)
		rightToken := h.Get(GitHubSignatureHeader) == "" && h.Get(GitLabTokenHeader) == token
		if err == nil && !rightSignature && !rightToken {
			t.Errorf("Verify accepted signature %q, token %q", sig, gitlab)
		}
	})
}
