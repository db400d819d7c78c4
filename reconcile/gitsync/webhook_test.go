package gitsync_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/receiver"
)

// TestWebhookTriggersReconcile: a Sync polled only every hour applies a new commit as soon
// as its git server calls the webhook — GitHub's signed push, then GitLab's token, each with
// its key of the webhook Secret — while
// a request with a wrong signature or a wrong token is refused with 401 and asks for
// nothing: the Sync is not annotated, and the repository is not fetched.
func TestWebhookTriggersReconcile(t *testing.T) {
	env := testenv.Get(t)
	mgr := startManager(t, env, managerOptions{})
	ns := uniqueNS("webhook")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	syncNS := "olmsync-webhook"
	createNamespace(t, env, syncNS)
	const token, gitlabToken = "webhook-shared-secret-0f3a9c", "gitlab-token-5d2e81"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: syncNS, Name: ns + "-hook"},
		Data: map[string][]byte{olmsyncv1alpha1.WebhookGitHubTokenKey: []byte(token),
			olmsyncv1alpha1.WebhookGitLabTokenKey: []byte(gitlabToken)},
	}
	if err := env.Client.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	s := newSync(t, env, syncNS, ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.Source.Interval = metav1.Duration{Duration: time.Hour}
		spec.Interval = metav1.Duration{Duration: time.Hour}
		spec.Webhook = &olmsyncv1alpha1.WebhookSpec{SecretRef: olmsyncv1alpha1.LocalObjectReference{Name: secret.Name}}
	})
	appliedAt(t, env, s, up.Head(t))
	hook := mgr.webhook + receiver.PathPrefix + syncNS + "/" + s.Name

	pushed := up.Push(t, map[string]string{
		"team/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: debug\n",
	}, "debug")
	payload := []byte(fmt.Sprintf(`{"ref":"refs/heads/main","after":%q}`, pushed))

	// Refused: nothing is asked of the Sync, so nothing is fetched.
	before, err := getSync(env, s)
	if err != nil {
		t.Fatal(err)
	}
	srv.TakeRequests()
	for name, headers := range map[string]map[string]string{
		"github signature under another key": {receiver.GitHubSignatureHeader: sign([]byte("guess"), payload), "X-GitHub-Event": "push"},
		"gitlab wrong token":                 {receiver.GitLabTokenHeader: gitlabToken + "x", "X-Gitlab-Event": "Push Hook"},
		"gitlab with the github key":         {receiver.GitLabTokenHeader: token, "X-Gitlab-Event": "Push Hook"},
	} {
		if code := post(t, hook, headers, payload); code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, code)
		}
	}
	after, err := getSync(env, s)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := after.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]; ok || after.ResourceVersion != before.ResourceVersion {
		t.Errorf("a refused request changed the Sync: %s=%q, resourceVersion %s → %s",
			olmsyncv1alpha1.ReconcileRequestAnnotation, v, before.ResourceVersion, after.ResourceVersion)
	}
	if reqs := srv.TakeRequests(); len(reqs) != 0 {
		t.Errorf("the git server was asked %q after refused requests", reqs)
	}

	// GitHub: signed with the token.
	code := post(t, hook, map[string]string{receiver.GitHubSignatureHeader: sign([]byte(token), payload), "X-GitHub-Event": "push"}, payload)
	if code/100 != 2 {
		t.Fatalf("signed GitHub push: status %d, want 2xx", code)
	}
	got := appliedAt(t, env, s, pushed)
	if level := configMapLevel(t, env, ns); level != "debug" {
		t.Errorf("data.level is %q after the webhook, want the pushed %q", level, "debug")
	}
	requested := got.Annotations[olmsyncv1alpha1.ReconcileRequestAnnotation]
	if requested == "" || got.Status.LastHandledReconcileAt != requested {
		t.Errorf("%s %q, lastHandledReconcileAt %q: the reconcile did not handle the request",
			olmsyncv1alpha1.ReconcileRequestAnnotation, requested, got.Status.LastHandledReconcileAt)
	}
	if reqs := srv.TakeRequests(); !fetched(reqs) {
		t.Errorf("the git server was asked %q: no fetch after the webhook", reqs)
	}

	// GitLab: the token itself.
	pushed = up.Push(t, map[string]string{
		"team/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: warn\n",
	}, "warn")
	// GitLab's push event of the new commit (a delivery of its own: the same body again
	// would be a replay, answered 200 and asking for nothing).
	gitlabPayload := []byte(fmt.Sprintf(`{"object_kind":"push","ref":"refs/heads/main","after":%q}`, pushed))
	code = post(t, hook, map[string]string{receiver.GitLabTokenHeader: gitlabToken, "X-Gitlab-Event": "Push Hook"}, gitlabPayload)
	if code/100 != 2 {
		t.Fatalf("GitLab push with the token: status %d, want 2xx", code)
	}
	appliedAt(t, env, s, pushed)
	if level := configMapLevel(t, env, ns); level != "warn" {
		t.Errorf("data.level is %q after the webhook, want the pushed %q", level, "warn")
	}
}

// sign is GitHub's X-Hub-Signature-256 of body under key.
func sign(key, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// post sends a webhook request and returns the status code.
func post(t testing.TB, url string, headers map[string]string, body []byte) int {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
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
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// fetched reports whether the git server's requests hold a fetch (git's smart HTTP
// protocol asks for the refs first).
func fetched(requests []string) bool {
	for _, r := range requests {
		if strings.HasSuffix(r, "/info/refs") {
			return true
		}
	}
	return false
}

// configMapLevel is data.level of the ConfigMap "settings" repository(ns) applies.
func configMapLevel(t *testing.T, env *testenv.Env, ns string) string {
	t.Helper()
	cm := object(t, env, configMapGVK, ns, "settings")
	if cm == nil {
		t.Fatalf("ConfigMap %s/settings is not there", ns)
	}
	level, _, _ := unstructured.NestedString(cm.Object, "data", "level")
	return level
}
