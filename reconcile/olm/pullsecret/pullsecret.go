package pullsecret

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	k8schain "github.com/google/go-containerregistry/pkg/authn/kubernetes"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
)

// Redacted stands in for a credential taken out of a message.
const Redacted = "[redacted]"

// Credentials are the registry credentials of one CatalogSource: a keychain over its pull
// secrets, then the fallback keychain.
type Credentials struct {
	authn.Keychain
	// Notes say which named Secrets could not be used, by name only: "pull secret
	// olm/quay not found".
	Notes []string
	// values are the credentials the Secrets hold, to take out of messages.
	values []string
}

// ForCatalogSource reads the pull secrets the CatalogSource names.
func ForCatalogSource(ctx context.Context, r client.Reader, cs *v1alpha1.CatalogSource, fallback authn.Keychain) (*Credentials, error) {
	return Load(ctx, r, cs.Namespace, cs.Spec.Secrets, fallback)
}

// Load reads the named Secrets of namespace into Credentials, falling back to fallback
// (authn.DefaultKeychain when nil) for registries they do not name. A Secret that does not
// exist, is of another type or cannot be parsed is left out with a note, as the kubelet
// leaves out an imagePullSecret it cannot use; only a failure to read one is an error.
func Load(ctx context.Context, r client.Reader, namespace string, names []string, fallback authn.Keychain) (*Credentials, error) {
	if fallback == nil {
		fallback = authn.DefaultKeychain
	}
	c := &Credentials{}
	var chains []authn.Keychain
	for _, name := range names {
		s := &corev1.Secret{}
		err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s)
		switch {
		case apierrors.IsNotFound(err):
			c.Notes = append(c.Notes, fmt.Sprintf("pull secret %s/%s not found", namespace, name))
			continue
		case err != nil:
			return nil, fmt.Errorf("read pull secret %s/%s: %w", namespace, name, err)
		}
		values, note := credentialValues(s)
		c.values = append(c.values, values...)
		if note != "" {
			c.Notes = append(c.Notes, note)
			continue
		}
		kc, err := k8schain.NewFromPullSecrets(ctx, []corev1.Secret{*s})
		if err != nil {
			// Its errors name a registry entry; redact all the same.
			c.Notes = append(c.Notes, fmt.Sprintf("pull secret %s/%s cannot be used: %s", namespace, name, c.Redact(err.Error())))
			continue
		}
		chains = append(chains, kc)
	}
	c.Keychain = authn.NewMultiKeychain(append(chains, fallback)...)
	return c, nil
}

// credentialValues are the secret strings of a pull secret (passwords, auth strings,
// tokens), and a note when the Secret is not a pull secret olmsync can read. The note
// never quotes the Secret's content.
func credentialValues(s *corev1.Secret) ([]string, string) {
	id := s.Namespace + "/" + s.Name
	var auths map[string]authn.AuthConfig
	switch s.Type {
	case corev1.SecretTypeDockerConfigJson:
		data, ok := s.Data[corev1.DockerConfigJsonKey]
		if !ok {
			return nil, fmt.Sprintf("pull secret %s has no %s key", id, corev1.DockerConfigJsonKey)
		}
		var cfg struct {
			Auths map[string]authn.AuthConfig `json:"auths"`
		}
		if json.Unmarshal(data, &cfg) != nil {
			return nil, fmt.Sprintf("pull secret %s: %s is not a docker config (JSON with auths)", id, corev1.DockerConfigJsonKey)
		}
		auths = cfg.Auths
	case corev1.SecretTypeDockercfg:
		data, ok := s.Data[corev1.DockerConfigKey]
		if !ok {
			return nil, fmt.Sprintf("pull secret %s has no %s key", id, corev1.DockerConfigKey)
		}
		if json.Unmarshal(data, &auths) != nil {
			return nil, fmt.Sprintf("pull secret %s: %s is not a docker config (JSON)", id, corev1.DockerConfigKey)
		}
	default:
		return nil, fmt.Sprintf("pull secret %s is of type %q, not %s or %s", id, s.Type, corev1.SecretTypeDockerConfigJson, corev1.SecretTypeDockercfg)
	}
	var values []string
	for _, a := range auths {
		values = append(values, a.Password, a.Auth, a.IdentityToken, a.RegistryToken)
	}
	return values, ""
}

// Redact takes every credential of the secrets out of msg.
func (c *Credentials) Redact(msg string) string {
	if c == nil {
		return msg
	}
	values := slices.Clone(c.values)
	// The longest first, so that a password inside an auth string does not leave half of it.
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	for _, v := range values {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, Redacted)
		}
	}
	return msg
}

// Explain is err as a message safe to show: redacted, with the notes on secrets that
// could not be used (often the reason a pull was refused).
func (c *Credentials) Explain(err error) string {
	if err == nil {
		return ""
	}
	msg := c.Redact(err.Error())
	if c != nil && len(c.Notes) > 0 {
		msg += " (" + strings.Join(c.Notes, "; ") + ")"
	}
	return msg
}
