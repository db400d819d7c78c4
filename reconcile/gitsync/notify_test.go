package gitsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// statusForge is a loopback GitHub that takes commit statuses as its API documents them
// (POST /repos/{owner}/{repo}/statuses/{sha}, a bearer token, a JSON body) and keeps them.
type statusForge struct {
	mu       sync.Mutex
	statuses []string // "<sha> <state> <context>: <description>"
}

func (f *statusForge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sha, ok := strings.CutPrefix(r.URL.Path, "/repos/acme/gitops/statuses/")
	if r.Method != http.MethodPost || !ok || r.Header.Get("Authorization") != "Bearer forge-token" ||
		r.Header.Get("Accept") != "application/vnd.github+json" {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	var body struct{ State, Context, Description string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	f.mu.Lock()
	f.statuses = append(f.statuses, fmt.Sprintf("%s %s %s: %s", sha, body.State, body.Context, body.Description))
	f.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func (f *statusForge) last(sha string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.statuses) - 1; i >= 0; i-- {
		if strings.HasPrefix(f.statuses[i], sha+" ") {
			return f.statuses[i]
		}
	}
	return ""
}

func (f *statusForge) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.statuses)
}

// TestCommitStatus: spec.notify posts, for each revision, success once it is applied and
// healthy, and failure with the violation count when the placement rules block it; the
// same outcome is not posted twice; a token the forge refuses is a Warning and the status
// records the error.
func TestCommitStatus(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("notify")
	createNamespace(t, env, ns)
	forge := &statusForge{}
	api := httptest.NewServer(forge)
	t.Cleanup(api.Close)
	if err := env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forge"},
		Data: map[string][]byte{"token": []byte("forge-token")}}); err != nil {
		t.Fatal(err)
	}
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	s := newSync(t, env, ns, "prod", srv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
		s.Notify = &olmsyncv1alpha1.NotifySpec{Provider: "github", Address: "https://github.com/acme/gitops", APIURL: api.URL,
			SecretRef: olmsyncv1alpha1.LocalObjectReference{Name: "forge"}}
	})
	first := up.Head(t)
	appliedAt(t, env, s, first)
	want := fmt.Sprintf("%s success olmsync/%s/prod: applied by %[2]s/prod, every app healthy", first, ns)
	olmtest.Eventually(t, "success posted", func() error {
		if got := forge.last(first); got != want {
			return fmt.Errorf("last status of %s: %q, want %q", first, got, want)
		}
		return nil
	})
	posted := forge.count()

	up.Push(t, map[string]string{
		"team/operatorgroup.yaml": "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: extra\nspec:\n  targetNamespaces: [" + ns + "]\n",
	}, "an OperatorGroup in the wrong app")
	second := up.Head(t)
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.PolicyViolationReason)
	want = fmt.Sprintf("%s failure olmsync/%s/prod: blocked by the placement rules in %[2]s/prod: %d violation(s)", second, ns, got.Status.ViolationCount)
	olmtest.Eventually(t, "failure posted", func() error {
		if got := forge.last(second); got != want {
			return fmt.Errorf("last status of %s: %q, want %q", second, got, want)
		}
		return nil
	})
	if got.Status.ViolationCount == 0 {
		t.Error("no violation counted")
	}
	if n := forge.count(); n != posted+1 {
		t.Errorf("%d statuses posted in all, want %d: one for each outcome, no repeats", n, posted+1)
	}

	// A token the forge refuses: a Warning, and the status says why.
	secret := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "forge"}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["token"] = []byte("revoked")
	if err := env.Client.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	up.Push(t, map[string]string{"team/operatorgroup.yaml": ""}, "remove the OperatorGroup")
	third := up.Head(t)
	olmtest.Eventually(t, "refused status recorded", func() error {
		got, err := getSync(env, s)
		if err != nil {
			return err
		}
		c := got.Status.LastCommitStatus
		if c == nil || !strings.HasSuffix(c.Revision, third) || !strings.Contains(c.Error, "the forge answered 404") {
			return fmt.Errorf("lastCommitStatus %+v", c)
		}
		if strings.Contains(c.Error, "revoked") {
			return fmt.Errorf("the token is in the status: %s", c.Error)
		}
		return nil
	})
	olmtest.Eventually(t, "a NotificationFailed Event", func() error {
		for _, e := range syncEvents(t, env, s) {
			if strings.HasPrefix(e, "Warning NotificationFailed: commit status for "+third) {
				return nil
			}
		}
		return fmt.Errorf("events: %v", syncEvents(t, env, s))
	})
}
