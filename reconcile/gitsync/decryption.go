package gitsync

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/render"
)

// DecryptionError is the Secret of spec.decryption that could not be read, or one of
// whose identities is malformed. It names the Secret and the key, never a key's value.
type DecryptionError struct {
	Secret types.NamespacedName
	Err    error
}

func (e *DecryptionError) Error() string { return e.Err.Error() }

func (e *DecryptionError) Unwrap() error { return e.Err }

// DecryptionFor reads the age identities of spec.decryption's Secret with c (the Sync's
// own identity when it names a service account, as for postBuild's Secrets); nil when the
// Sync decrypts nothing. The messages are Flux's.
func DecryptionFor(ctx context.Context, c client.Reader, obj *olmsyncv1alpha1.Sync) (*render.Decryption, error) {
	d := obj.Spec.Decryption
	if d == nil {
		return nil, nil
	}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: d.SecretRef.Name}
	if d.Provider != olmsyncv1alpha1.DecryptionProviderSOPS {
		return nil, &DecryptionError{Secret: key, Err: fmt.Errorf("decryption provider %q is not supported: sops is", d.Provider)}
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, key, sec); err != nil {
		return nil, &DecryptionError{Secret: key, Err: fmt.Errorf("cannot get %s decryption Secret '%s': %w", d.Provider, key, err)}
	}
	dec, err := render.NewDecryption(fmt.Sprintf("%s decryption Secret '%s'", d.Provider, key), sec.Data)
	if err != nil {
		return nil, &DecryptionError{Secret: key, Err: err}
	}
	return dec, nil
}

// EncryptedSecretError says that an object to apply is a SOPS-encrypted Secret: nothing
// is applied (Flux's refusal).
type EncryptedSecretError struct {
	Object *unstructured.Unstructured
}

func (e *EncryptedSecretError) Error() string { return render.EncryptedSecretMessage(e.Object) }

// RefuseEncrypted returns an EncryptedSecretError for the first Secret of objs that is
// still SOPS-encrypted (the Sync has no spec.decryption), nil when there is none.
func RefuseEncrypted(objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		if render.IsEncryptedSecret(u) {
			return &EncryptedSecretError{Object: u}
		}
	}
	return nil
}
