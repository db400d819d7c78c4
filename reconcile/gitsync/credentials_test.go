package gitsync_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/olmtest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// TestCredentialsFromSecret: a Sync fetches over https with basic auth and a private CA,
// all from the Secret spec.source.secretRef names. When the server then refuses the
// password, Ready says AuthenticationFailed, the last applied revision stays applied and
// nothing is pruned — and neither the refused password nor the good one shows in the
// Sync's status or in any Event.
func TestCredentialsFromSecret(t *testing.T) {
	env := testenv.Get(t)
	logs := &logBuffer{}
	// Debug, as `olmsync run --zap-log-level=debug` logs. (client-go dumps response bodies, a
	// Secret's included, only from verbosity 8 up, as kubectl -v=8 does.)
	startManager(t, env, managerOptions{logger: funcr.New(logs.write, funcr.Options{Verbosity: 1})})
	ns := uniqueNS("creds")
	up := gittest.NewUpstream(t, with(repository(ns), map[string]string{
		"team/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
	}))
	const user, password, wrong = "deploy-bot", "pa55-w0rd-right-7c1e", "pa55-w0rd-stale-b42d"
	srv := gittest.Serve(t, up, gittest.ServerOptions{TLS: true, Username: user, Password: password})
	syncNS := "olmsync-creds"
	createNamespace(t, env, syncNS)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: syncNS, Name: ns + "-git"},
		Data:       map[string][]byte{"username": []byte(user), "password": []byte(password), "ca.crt": srv.CABundle()},
	}
	if err := env.Client.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	s := newSync(t, env, syncNS, ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.Source.SecretRef = &olmsyncv1alpha1.LocalObjectReference{Name: secret.Name}
	})
	before := appliedAt(t, env, s, up.Head(t))
	if !strings.HasPrefix(srv.RepoURL(), "https://") || object(t, env, configMapGVK, ns, "extra") == nil {
		t.Fatalf("the Sync did not apply %s", srv.RepoURL())
	}

	// The password in the Secret goes stale; a commit that drops extra is pushed.
	secret.Data["password"] = []byte(wrong)
	if err := env.Client.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	up.Push(t, map[string]string{"team/extra.yaml": ""}, "drop extra")
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.AuthenticationFailedReason)
	msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition)
	if !strings.Contains(msg, "the last applied revision "+before.Status.LastAppliedRevision+" stays applied") {
		t.Errorf("Ready message %q does not say the last revision stays", msg)
	}
	if c := conditions.Get(got, olmsyncv1alpha1.FetchFailedCondition); c == nil || c.Reason != olmsyncv1alpha1.AuthenticationFailedReason {
		t.Errorf("FetchFailed is %+v, want True with reason %s", c, olmsyncv1alpha1.AuthenticationFailedReason)
	}
	if got.Status.LastAppliedRevision != before.Status.LastAppliedRevision {
		t.Errorf("lastAppliedRevision %q, want the last good %q", got.Status.LastAppliedRevision, before.Status.LastAppliedRevision)
	}
	if object(t, env, configMapGVK, ns, "extra") == nil {
		t.Error("a Sync that could not fetch pruned an object")
	}
	if diff := cmp.Diff(before.Status.Inventory, got.Status.Inventory); diff != "" {
		t.Errorf("the inventory changed while the fetch failed (-before +after):\n%s", diff)
	}

	olmtest.Eventually(t, "a Warning Event saying AuthenticationFailed", func() error {
		for _, e := range syncEvents(t, env, s) {
			if strings.HasPrefix(e, "Warning "+olmsyncv1alpha1.AuthenticationFailedReason+": ") {
				return nil
			}
		}
		return fmt.Errorf("events: %q", syncEvents(t, env, s))
	})
	status, err := json.Marshal(got.Status)
	if err != nil {
		t.Fatal(err)
	}
	events := namespaceEvents(t, env, syncNS)
	logged := logs.String()
	if !strings.Contains(logged, olmsyncv1alpha1.AuthenticationFailedReason) {
		t.Errorf("the failed fetch was not logged:\n%s", logged)
	}
	for _, p := range []string{password, wrong} {
		if strings.Contains(logged, p) || strings.Contains(logged, base64.StdEncoding.EncodeToString([]byte(p))) {
			t.Errorf("the log shows a password:\n%s", logged)
		}
		if strings.Contains(string(status), p) {
			t.Errorf("the Sync's status shows a password: %s", status)
		}
		for _, e := range events {
			if strings.Contains(e, p) {
				t.Errorf("an Event shows a password: %s", e)
			}
		}
	}
}

// TestQueryValuesNeverShown (issue 30): the Sync CRD refuses a URL whose query names a
// token, key, password, secret, signature or credential, but a value under another name
// (?code=…) passes it, and sources treats every query value as a secret. Such a Sync's
// failed fetch, reconciled by olmsync run's manager, shows the URL as ?*** — in Ready, the
// Event, the log at debug level and the metrics — and never the value.
func TestQueryValuesNeverShown(t *testing.T) {
	env := testenv.Get(t)
	logs := &logBuffer{}
	startManager(t, env, managerOptions{logger: funcr.New(logs.write, funcr.Options{Verbosity: 1})})
	const secret = "c0de-S3CRET-5a7e"
	ns := uniqueNS("query")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	syncNS := "olmsync-query"
	createNamespace(t, env, syncNS)
	s := newSync(t, env, syncNS, ns, srv.RepoURL()+"?code="+secret, nil)
	var got *olmsyncv1alpha1.Sync
	olmtest.Eventually(t, "Ready=False naming the URL without its query", func() error {
		var err error
		if got, err = getSync(env, s); err != nil {
			return err
		}
		if c := conditions.Get(got, olmsyncv1alpha1.ReadyCondition); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, srv.RepoURL()+"?***") {
			return fmt.Errorf("Ready is %+v", c)
		}
		return nil
	})
	olmtest.Eventually(t, "a Warning Event of the failed fetch", func() error {
		for _, e := range syncEvents(t, env, s) {
			if strings.HasPrefix(e, "Warning ") && strings.Contains(e, "?***") {
				return nil
			}
		}
		return fmt.Errorf("events: %q", syncEvents(t, env, s))
	})
	status, err := json.Marshal(got.Status)
	if err != nil {
		t.Fatal(err)
	}
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var exposed strings.Builder
	for _, f := range families {
		_, _ = expfmt.MetricFamilyToText(&exposed, f)
	}
	if !strings.Contains(exposed.String(), `url="`+srv.RepoURL()+`?***"`) {
		t.Errorf("no gotk_resource_info series of the Sync with its URL redacted")
	}
	if !strings.Contains(logs.String(), "fetch failed") {
		t.Errorf("the failed fetch was not logged:\n%s", logs.String())
	}
	for what, text := range map[string]string{"the status": string(status), "an Event": strings.Join(namespaceEvents(t, env, syncNS), "\n"),
		"the log": logs.String(), "the metrics": exposed.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the query's value:\n%s", what, text)
		}
	}
}

// TestMissingSecretWaits: a Sync whose spec.source.secretRef names no Secret says
// SecretNotFound, and applies once the Secret appears.
func TestMissingSecretWaits(t *testing.T) {
	env := testenv.Get(t)
	startManager(t, env, managerOptions{})
	ns := uniqueNS("nosecret")
	up := gittest.NewUpstream(t, repository(ns))
	srv := gittest.Serve(t, up, gittest.ServerOptions{TLS: true, Username: "deploy-bot", Password: "pa55-w0rd-late-91d0"})
	syncNS := "olmsync-nosecret"
	createNamespace(t, env, syncNS)
	s := newSync(t, env, syncNS, ns, srv.RepoURL(), func(spec *olmsyncv1alpha1.SyncSpec) {
		spec.Source.SecretRef = &olmsyncv1alpha1.LocalObjectReference{Name: ns + "-git"}
	})
	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.SecretNotFoundReason)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); !strings.Contains(msg, syncNS+"/"+ns+"-git") {
		t.Errorf("Ready message %q does not name the Secret", msg)
	}
	if got.Status.Inventory != nil || object(t, env, configMapGVK, ns, "settings") != nil {
		t.Error("a Sync without its Secret applied something")
	}

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: syncNS, Name: ns + "-git"},
		Data:       map[string][]byte{"username": []byte("deploy-bot"), "password": []byte("pa55-w0rd-late-91d0"), "ca.crt": srv.CABundle()},
	}
	if err := env.Client.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	appliedAt(t, env, s, up.Head(t))
}

// namespaceEvents are every Event of a namespace, core/v1 and events.k8s.io/v1, as text.
func namespaceEvents(t *testing.T, env *testenv.Env, ns string) []string {
	t.Helper()
	var out []string
	var core corev1.EventList
	if err := env.Client.List(context.Background(), &core, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range core.Items {
		out = append(out, fmt.Sprintf("core/v1 %s %s %s: %s (%s)", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message, e.Action))
	}
	var events eventsv1.EventList
	if err := env.Client.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		out = append(out, fmt.Sprintf("events.k8s.io/v1 %s %s %s: %s (%s)", e.Regarding.Kind, e.Regarding.Name, e.Reason, e.Note, e.Action))
	}
	return out
}

// logBuffer keeps what a funcr logger writes, for a test to search.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) write(prefix, args string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(prefix + " " + args + "\n")
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
