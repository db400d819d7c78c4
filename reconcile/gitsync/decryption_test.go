package gitsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/sopstest"
	"github.com/olmsync/olmsync/internal/testenv"
	"github.com/olmsync/olmsync/reconcile/diff"
)

// sopsFiles is an app with a SOPS-encrypted Secret manifest and a secretGenerator whose
// env file is SOPS-encrypted, both encrypted for key by the test; password and apiKey
// are the plaintext values.
func sopsFiles(t *testing.T, key *sopstest.Key, password, apiKey string) map[string]string {
	t.Helper()
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: %s\n", password)
	return map[string]string{
		"kustomization.yaml": "resources: [secret.sops.yaml]\nsecretGenerator:\n- name: api\n  envs: [api.sops.env]\ngeneratorOptions:\n  disableNameSuffixHash: true\n",
		"secret.sops.yaml":   string(sopstest.Encrypt(t, []byte(secret), sopstest.YAML, sopstest.KubernetesRegex, key)),
		"api.sops.env":       string(sopstest.Encrypt(t, []byte("API_KEY="+apiKey+"\n"), sopstest.Dotenv, "", key)),
	}
}

func secretData(t *testing.T, c client.Client, ns, name string) map[string]string {
	t.Helper()
	sec := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, sec); err != nil {
		t.Fatalf("Secret %s/%s: %v", ns, name, err)
	}
	out := map[string]string{}
	for k, v := range sec.Data {
		out[k] = string(v)
	}
	return out
}

// TestDecryptionOnCluster: a Sync with spec.decryption applies the Secrets its app
// encrypts with SOPS (a manifest and a secretGenerator's env file, encrypted by the test
// for a fresh age key) decrypted; while the key's Secret is missing the build fails as
// Flux's does and nothing is applied; a Sync without decryption refuses the encrypted
// Secret; no decrypted value reaches the status, the Events, the log, or `olmsync diff`.
func TestDecryptionOnCluster(t *testing.T) {
	env := testenv.Get(t)
	logs := &logBuffer{}
	startManager(t, env, managerOptions{logger: funcr.New(logs.write, funcr.Options{Verbosity: 1})})
	ns := uniqueNS("sops")
	createNamespace(t, env, ns)
	key := sopstest.NewKey(t)
	const password, apiKey = "pw-plaintext-7f3a", "key-plaintext-91c2"
	up := gittest.NewUpstream(t, teamRepo(ns, sopsFiles(t, key, password, apiKey)))
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	s := newSync(t, env, ns, "sops", srv.RepoURL(), func(s *olmsyncv1alpha1.SyncSpec) {
		s.Decryption = &olmsyncv1alpha1.Decryption{Provider: "sops", SecretRef: olmsyncv1alpha1.LocalObjectReference{Name: "sops-age"}}
	})

	got := waitReady(t, env, s, metav1.ConditionFalse, olmsyncv1alpha1.BuildFailedReason)
	want := fmt.Sprintf(`cannot get sops decryption Secret '%s/sops-age': secrets "sops-age" not found; nothing was applied or pruned`, ns)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); msg != want {
		t.Errorf("Ready message = %q, want %q", msg, want)
	}
	if object(t, env, secretGVK, ns, "db") != nil {
		t.Fatal("applied although the decryption Secret is missing")
	}

	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sops-age"},
		Data: map[string][]byte{"age.agekey": []byte(key.Identity() + "\n")}}); err != nil {
		t.Fatal(err)
	}
	got = appliedAt(t, env, s, up.Head(t))
	if d := secretData(t, env.Client, ns, "db"); d["password"] != password || len(d) != 1 {
		t.Errorf("Secret db data = %v, want password %q only", d, password)
	}
	if d := secretData(t, env.Client, ns, "api"); d["API_KEY"] != apiKey || len(d) != 1 {
		t.Errorf("Secret api data = %v, want API_KEY %q only", d, apiKey)
	}

	// `olmsync diff sync` after a change of the encrypted value (the Sync suspended, so
	// that it does not apply the change first): the Secret is changed, and its diff says
	// so without either value.
	patchSpec(t, env, got, func(spec *olmsyncv1alpha1.SyncSpec) { spec.Suspend = true })
	const newPassword = "pw-plaintext-new-55d0"
	up.Push(t, teamRepo(ns, sopsFiles(t, key, newPassword, apiKey)), "rotate the password")
	report, err := diff.Sync(ctx, env.Client, got, diff.Options{CacheDir: t.TempDir(), Config: env.Config})
	if err != nil {
		t.Fatal(err)
	}
	var db *diff.Object
	for i, o := range report.Objects {
		if o.Kind == "Secret" && o.Name == "db" {
			db = &report.Objects[i]
		}
	}
	if db == nil || db.Action != diff.Changed || !strings.Contains(db.Diff, diff.MaskAfter) {
		t.Errorf("diff of Secret db = %+v, want changed with masked values", db)
	}
	out, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}

	patchSpec(t, env, got, func(spec *olmsyncv1alpha1.SyncSpec) { spec.Suspend = false })
	got = appliedAt(t, env, s, up.Head(t))
	if d := secretData(t, env.Client, ns, "db"); d["password"] != newPassword {
		t.Errorf("Secret db data = %v after the change", d)
	}
	status, err := json.Marshal(got.Status)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"status": string(status), "events": strings.Join(syncEvents(t, env, s), "\n"),
		"log": logs.String(), "diff": string(out)} {
		for _, secret := range []string{password, newPassword, apiKey, key.Identity()} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s holds the secret %q", what, secret)
			}
		}
	}
	if !strings.Contains(logs.String(), ns) {
		t.Error("the log says nothing of the Sync: the capture is broken")
	}

	// Without decryption, the same repository's encrypted Secret is refused as Flux
	// refuses it, and nothing is applied.
	plain := uniqueNS("nosops")
	createNamespace(t, env, plain)
	up2 := gittest.NewUpstream(t, teamRepo(plain, sopsFiles(t, key, password, apiKey)))
	srv2 := gittest.Serve(t, up2, gittest.ServerOptions{})
	s2 := newSync(t, env, plain, "nosops", srv2.RepoURL(), nil)
	got = waitReady(t, env, s2, metav1.ConditionFalse, olmsyncv1alpha1.ApplyFailedReason)
	want = fmt.Sprintf("Secret/%s/db is SOPS encrypted, configuring decryption is required for this secret to be reconciled", plain)
	if msg := conditions.GetMessage(got, olmsyncv1alpha1.ReadyCondition); msg != want {
		t.Errorf("Ready message = %q, want %q", msg, want)
	}
	if object(t, env, secretGVK, plain, "api") != nil || object(t, env, secretGVK, plain, "db") != nil {
		t.Error("applied objects of a revision with an encrypted Secret")
	}
}
