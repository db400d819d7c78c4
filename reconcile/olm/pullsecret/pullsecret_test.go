package pullsecret_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/olmsync/olmsync/internal/ocitest"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/reconcile/olm/pullsecret"
)

const password = "s3cret-Pa55word"

func secret(name string, typ corev1.SecretType, key string, data []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cat", Name: name}, Type: typ, Data: map[string][]byte{key: data}}
}

// TestPullSecrets: the credentials of a dockerconfigjson or a dockercfg Secret pull from a
// repository behind basic auth; a Secret that is missing, of another type or unparsable is
// left out and named, never quoted; no message carries a credential.
func TestPullSecrets(t *testing.T) {
	ctx := context.Background()
	reg := ocitest.Serve(t)
	reg.Private("private/", "olm", password)
	dir := shareddata.Path(t, filepath.Join("data", "catalogs", "community-operators-bundles", "operators", "etcd", "0.9.4"))
	ref, _ := reg.Push(t, "private/etcd:0.9.4", ocitest.BundleImage(t, dir, nil))
	auth := base64.StdEncoding.EncodeToString([]byte("olm:" + password))
	objects := []client.Object{
		secret("json", corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey, reg.DockerConfigJSON("olm", password)),
		secret("cfg", corev1.SecretTypeDockercfg, corev1.DockerConfigKey, fmt.Appendf(nil, `{%q:{"auth":%q}}`, reg.Host, auth)),
		secret("opaque", corev1.SecretTypeOpaque, "password", []byte(password)),
		secret("broken", corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey, []byte(`{"auths":`+password)),
		secret("wrong", corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey, reg.DockerConfigJSON("olm", "not-"+password)),
	}
	r := fake.NewClientBuilder().WithObjects(objects...).Build()
	// The fallback has nothing for the registry, as a process without a docker config.
	none := authn.NewMultiKeychain()
	pull := func(names ...string) (*pullsecret.Credentials, error) {
		t.Helper()
		creds, err := pullsecret.Load(ctx, r, "cat", names, none)
		if err != nil {
			t.Fatal(err)
		}
		_, err = catalog.LoadBundleImage(ctx, ref, catalog.ImageOptions{Transport: reg.Transport(), Keychain: creds})
		return creds, err
	}

	for _, names := range [][]string{{"json"}, {"cfg"}, {"missing", "opaque", "broken", "json"}} {
		creds, err := pull(names...)
		if err != nil {
			t.Errorf("secrets %v: %v", names, creds.Explain(err))
		}
		if len(names) > 1 {
			want := []string{
				"pull secret cat/missing not found",
				`pull secret cat/opaque is of type "Opaque", not kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg`,
				"pull secret cat/broken: .dockerconfigjson is not a docker config (JSON with auths)",
			}
			if strings.Join(creds.Notes, "\n") != strings.Join(want, "\n") {
				t.Errorf("notes:\n%s\nwant\n%s", strings.Join(creds.Notes, "\n"), strings.Join(want, "\n"))
			}
		}
	}

	for _, names := range [][]string{nil, {"wrong"}, {"missing"}} {
		creds, err := pull(names...)
		if err == nil {
			t.Fatalf("secrets %v: the private image was pulled", names)
		}
		msg := creds.Explain(err)
		if !strings.Contains(msg, "UNAUTHORIZED") || strings.Contains(msg, password) || strings.Contains(msg, auth) {
			t.Errorf("secrets %v: message %q: want the refusal, without the credentials", names, msg)
		}
		if len(names) == 1 && names[0] == "missing" && !strings.HasSuffix(msg, "(pull secret cat/missing not found)") {
			t.Errorf("message %q does not say the secret is missing", msg)
		}
	}

	creds, _ := pullsecret.Load(ctx, r, "cat", []string{"json", "cfg"}, none)
	if got := creds.Redact("user olm, password " + password + ", auth " + auth); got != "user olm, password [redacted], auth [redacted]" {
		t.Errorf("Redact = %q", got)
	}
}
