package receiver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// PathPrefix is where the receiver is mounted.
const PathPrefix = "/hooks/"

// MaxBodyBytes bounds a payload; GitHub caps its own at 25 MiB, but a push event is far
// smaller and the body is only hashed, never parsed.
const MaxBodyBytes = 5 << 20

// The headers the receiver verifies.
const (
	GitHubSignatureHeader = "X-Hub-Signature-256"
	GitLabTokenHeader     = "X-Gitlab-Token"
)

// Trigger asks for an immediate reconcile of a Sync.
type Trigger func(ctx context.Context, sync types.NamespacedName) error

// Handler serves /hooks/<namespace>/<sync>.
type Handler struct {
	// Reader reads Syncs and Secrets.
	Reader client.Reader
	// Trigger is called for each verified request.
	Trigger Trigger
	// Log gets one line per refused or failed request; the zero logger discards.
	Log logr.Logger
}

// errRefused is every verification failure as the caller sees it.
var errRefused = errors.New("unauthorized")

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST", http.StatusMethodNotAllowed)
		return
	}
	key, ok := syncOf(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "payload too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read the payload", http.StatusBadRequest)
		return
	}
	if err := h.verify(r.Context(), key, r.Header, body); err != nil {
		h.Log.Info("webhook refused", "sync", key.String(), "reason", err.Error())
		http.Error(w, errRefused.Error(), http.StatusUnauthorized)
		return
	}
	if err := h.Trigger(r.Context(), key); err != nil {
		h.Log.Error(err, "webhook verified but the reconcile could not be requested", "sync", key.String())
		http.Error(w, "could not request a reconcile", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	_, _ = fmt.Fprintf(w, "reconcile of %s requested\n", key)
}

// syncOf reads <namespace>/<sync> from the path; both must be valid object names.
func syncOf(path string) (types.NamespacedName, bool) {
	rest, ok := strings.CutPrefix(path, PathPrefix)
	if !ok {
		return types.NamespacedName{}, false
	}
	ns, name, ok := strings.Cut(strings.TrimSuffix(rest, "/"), "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// verify checks the request against the Sync's webhook token. The errors are for the
// log; the caller answers every one of them the same way.
func (h *Handler) verify(ctx context.Context, key types.NamespacedName, header http.Header, body []byte) error {
	sync := &olmsyncv1alpha1.Sync{}
	if err := h.Reader.Get(ctx, key, sync); err != nil {
		return fmt.Errorf("read the Sync: %w", err)
	}
	if sync.Spec.Webhook == nil {
		return errors.New("the Sync has no spec.webhook")
	}
	secret := &corev1.Secret{}
	secretKey := types.NamespacedName{Namespace: key.Namespace, Name: sync.Spec.Webhook.SecretRef.Name}
	if err := h.Reader.Get(ctx, secretKey, secret); err != nil {
		return fmt.Errorf("read Secret %s: %w", secretKey, err)
	}
	token := secret.Data[olmsyncv1alpha1.WebhookTokenKey]
	if len(token) == 0 {
		return fmt.Errorf("secret %s has no %q", secretKey, olmsyncv1alpha1.WebhookTokenKey)
	}
	return Verify(token, header, body)
}

// Verify checks a payload's GitHub signature or GitLab token against token. A request
// carrying a GitHub signature is judged by it alone.
func Verify(token []byte, header http.Header, body []byte) error {
	if len(token) == 0 {
		return errors.New("no token to verify against")
	}
	if sig := header.Get(GitHubSignatureHeader); sig != "" {
		hexSum, ok := strings.CutPrefix(sig, "sha256=")
		if !ok {
			return fmt.Errorf("%s is not sha256=<hex>", GitHubSignatureHeader)
		}
		got, err := hex.DecodeString(hexSum)
		if err != nil {
			return fmt.Errorf("%s is not sha256=<hex>", GitHubSignatureHeader)
		}
		mac := hmac.New(sha256.New, token)
		mac.Write(body)
		if !hmac.Equal(got, mac.Sum(nil)) {
			return fmt.Errorf("%s does not match the payload", GitHubSignatureHeader)
		}
		return nil
	}
	if got := header.Get(GitLabTokenHeader); got != "" {
		if subtle.ConstantTimeCompare([]byte(got), token) != 1 {
			return fmt.Errorf("%s does not match", GitLabTokenHeader)
		}
		return nil
	}
	return fmt.Errorf("neither %s nor %s is set", GitHubSignatureHeader, GitLabTokenHeader)
}

// RequestReconcile is the Trigger the manager uses: it sets the Sync's
// reconcile.olmsync.dev/requestedAt annotation to now, which the Sync reconciler's
// predicate turns into a reconcile, exactly as `olmsync reconcile sync` does.
func RequestReconcile(c client.Client, now func() time.Time) Trigger {
	return func(ctx context.Context, key types.NamespacedName) error {
		sync := &olmsyncv1alpha1.Sync{}
		if err := c.Get(ctx, key, sync); err != nil {
			return fmt.Errorf("read Sync %s: %w", key, err)
		}
		patch := client.MergeFrom(sync.DeepCopy())
		ann := sync.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[olmsyncv1alpha1.ReconcileRequestAnnotation] = now().UTC().Format(time.RFC3339Nano)
		sync.SetAnnotations(ann)
		if err := c.Patch(ctx, sync, patch); err != nil {
			return fmt.Errorf("annotate Sync %s: %w", key, err)
		}
		return nil
	}
}
