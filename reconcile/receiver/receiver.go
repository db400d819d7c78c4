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
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
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

// The headers that identify a delivery: GitHub's, GitLab's, and the common request ID
// (a redelivery from the provider's page carries the same one).
var deliveryHeaders = []string{"X-GitHub-Delivery", "X-Gitlab-Event-UUID", "X-Request-Id"}

// Trigger asks for an immediate reconcile of a Sync.
type Trigger func(ctx context.Context, sync types.NamespacedName) error

// Handler serves /hooks/<namespace>/<sync>.
type Handler struct {
	// Reader reads Syncs (listed by WebhookPathIndex) and Secrets: the manager's cache,
	// so that a request costs no read of the API server.
	Reader client.Reader
	// Trigger is called for each verified request that is not a replay.
	Trigger Trigger
	// Log gets one line per refused or failed request; the zero logger discards.
	Log logr.Logger
	// Options bound what one source may ask; the zero value is Defaults.
	Options Options

	once     sync.Once
	limiter  *limiter
	seen     *deliveries
	warnedMu sync.Mutex
	warned   map[types.NamespacedName]string
}

// Options bound the receiver.
type Options struct {
	// RatePerMinute is how many requests one source (client address) may make a minute,
	// with bursts of Burst; a source over it is answered 429 before its body is read or
	// anything is looked up. Zero is DefaultRatePerMinute; negative turns the limit off.
	RatePerMinute int
	Burst         int
	// ReplayWindow is how long a verified delivery is remembered (its delivery ID and the
	// digest of its body, per Sync): the same delivery again within it triggers nothing.
	// Zero is DefaultReplayWindow.
	ReplayWindow time.Duration
	// LookupTimeout bounds the lookups of one request; zero is DefaultLookupTimeout.
	LookupTimeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// The defaults of Options.
const (
	DefaultRatePerMinute = 60
	DefaultBurst         = 20
	DefaultReplayWindow  = time.Hour
	DefaultLookupTimeout = 5 * time.Second
	// maxRemembered bounds the sources and deliveries kept in memory, so that a flood of
	// addresses or deliveries cannot grow them without end.
	maxRemembered = 10000
)

func (o Options) withDefaults() Options {
	if o.RatePerMinute == 0 {
		o.RatePerMinute = DefaultRatePerMinute
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.ReplayWindow <= 0 {
		o.ReplayWindow = DefaultReplayWindow
	}
	if o.LookupTimeout <= 0 {
		o.LookupTimeout = DefaultLookupTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// errRefused is every verification failure as the caller sees it.
var errRefused = errors.New("unauthorized")

func (h *Handler) init() {
	h.once.Do(func() {
		h.Options = h.Options.withDefaults()
		h.limiter = newLimiter(h.Options.RatePerMinute, h.Options.Burst, h.Options.Now)
		h.seen = &deliveries{window: h.Options.ReplayWindow, now: h.Options.Now, at: map[string]time.Time{}}
		h.warned = map[types.NamespacedName]string{}
	})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.init()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST", http.StatusMethodNotAllowed)
		return
	}
	if wait, ok := h.limiter.allow(sourceOf(r)); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		http.Error(w, "too many requests", http.StatusTooManyRequests)
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
	ctx, cancel := context.WithTimeout(r.Context(), h.Options.LookupTimeout)
	defer cancel()
	if err := h.verify(ctx, key, r.Header, body); err != nil {
		h.Log.Info("webhook refused", "sync", key.String(), "reason", err.Error())
		http.Error(w, errRefused.Error(), http.StatusUnauthorized)
		return
	}
	ids := deliveryKeys(key, r.Header, body)
	if !h.seen.add(ids) {
		h.Log.Info("webhook delivery already handled, nothing asked", "sync", key.String(), "delivery", deliveryID(r.Header))
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprintf(w, "delivery already handled\n")
		return
	}
	if err := h.Trigger(ctx, key); err != nil {
		h.seen.forget(ids) // a redelivery may try again
		h.Log.Error(err, "webhook verified but the reconcile could not be requested", "sync", key.String())
		http.Error(w, "could not request a reconcile", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	_, _ = fmt.Fprintf(w, "reconcile of %s requested\n", key)
}

// sourceOf is the address a request came from, without its port: what the rate limit
// counts. An IPv6 address counts as its /64, which one client holds whole. Forwarded headers
// are not read: anyone can write them.
func sourceOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Is6() || ip.Is4In6() {
		return host
	}
	if p, err := ip.WithZone("").Prefix(64); err == nil {
		return p.String()
	}
	return host
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

// WebhookPathIndex indexes the Syncs that have a spec.webhook by "<namespace>/<name>", the
// path they are called at: the receiver finds a Sync in the manager's cache through it,
// and a Sync without a webhook is not there to find.
const WebhookPathIndex = "olmsync.dev/webhook-path"

// IndexWebhookPath is the field index WebhookPathIndex; register it on the manager's
// field indexer.
func IndexWebhookPath(obj client.Object) []string {
	s, ok := obj.(*olmsyncv1alpha1.Sync)
	if !ok || s.Spec.Webhook == nil {
		return nil
	}
	return []string{s.Namespace + "/" + s.Name}
}

// verify checks the request against the Sync's webhook Secret. The errors are for the
// log; the caller answers every one of them the same way.
func (h *Handler) verify(ctx context.Context, key types.NamespacedName, header http.Header, body []byte) error {
	var syncs olmsyncv1alpha1.SyncList
	if err := h.Reader.List(ctx, &syncs, client.InNamespace(key.Namespace), client.MatchingFields{WebhookPathIndex: key.String()}); err != nil {
		return fmt.Errorf("look up the Sync: %w", err)
	}
	if len(syncs.Items) != 1 || syncs.Items[0].Spec.Webhook == nil {
		return errors.New("no Sync of that name has a spec.webhook")
	}
	secret := &corev1.Secret{}
	secretKey := types.NamespacedName{Namespace: key.Namespace, Name: syncs.Items[0].Spec.Webhook.SecretRef.Name}
	if err := h.Reader.Get(ctx, secretKey, secret); err != nil {
		return fmt.Errorf("read Secret %s: %w", secretKey, err)
	}
	provider, err := providerOf(header)
	if err != nil {
		return err
	}
	token, legacy := tokenFor(secret.Data, provider)
	if len(token) == 0 {
		return fmt.Errorf("secret %s has no %q (nor the deprecated %q)", secretKey, provider, olmsyncv1alpha1.WebhookTokenKey)
	}
	if legacy {
		h.warnLegacy(secretKey, secret.ResourceVersion, provider)
	}
	return Verify(token, header, body)
}

// providerOf is the Secret key of the provider a request says it comes from: a request
// carrying a GitHub signature is GitHub's.
func providerOf(header http.Header) (string, error) {
	switch {
	case header.Get(GitHubSignatureHeader) != "":
		return olmsyncv1alpha1.WebhookGitHubTokenKey, nil
	case header.Get(GitLabTokenHeader) != "":
		return olmsyncv1alpha1.WebhookGitLabTokenKey, nil
	}
	return "", fmt.Errorf("neither %s nor %s is set", GitHubSignatureHeader, GitLabTokenHeader)
}

// tokenFor is the provider's secret: its own key, else the deprecated "token" (legacy).
func tokenFor(data map[string][]byte, provider string) (token []byte, legacy bool) {
	if t := data[provider]; len(t) > 0 {
		return t, false
	}
	return data[olmsyncv1alpha1.WebhookTokenKey], true
}

// warnLegacy logs, once per version of a Secret, that it is read through the deprecated
// key "token".
func (h *Handler) warnLegacy(secret types.NamespacedName, version, provider string) {
	h.warnedMu.Lock()
	defer h.warnedMu.Unlock()
	if h.warned[secret] == version {
		return
	}
	if len(h.warned) >= maxRemembered {
		clear(h.warned)
	}
	h.warned[secret] = version
	h.Log.Info("deprecated: the webhook Secret's key \"token\" serves every provider; move it to the provider's own key",
		"secret", secret.String(), "key", provider)
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

// SecretCacheTransform is what the manager's cache keeps of a Secret: its name, namespace,
// resource version and the webhook keys, nothing else (no other data, annotations, or
// managed fields). The receiver is the only reader of cached Secrets; the Sync reconciler
// reads a source's credentials from the API server.
func SecretCacheTransform(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	kept := &corev1.Secret{TypeMeta: s.TypeMeta}
	kept.Namespace, kept.Name, kept.UID, kept.ResourceVersion = s.Namespace, s.Name, s.UID, s.ResourceVersion
	for _, k := range []string{olmsyncv1alpha1.WebhookGitHubTokenKey, olmsyncv1alpha1.WebhookGitLabTokenKey, olmsyncv1alpha1.WebhookTokenKey} {
		if v, ok := s.Data[k]; ok {
			if kept.Data == nil {
				kept.Data = map[string][]byte{}
			}
			kept.Data[k] = v
		}
	}
	return kept, nil
}

// Timeouts bound one connection to the receiver's server.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers; Read the whole request, body
	// included, so that a body trickled a byte at a time cannot hold a connection;
	// Write the answer; Idle a kept-alive connection between requests.
	ReadHeader, Read, Write, Idle time.Duration
}

// DefaultTimeouts are the receiver server's timeouts when none are given.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: 20 * time.Second, Write: 20 * time.Second, Idle: 60 * time.Second}

// NewServer is the receiver's HTTP server at addr, serving h under PathPrefix with the
// timeouts (DefaultTimeouts' for those unset).
func NewServer(addr string, h http.Handler, t Timeouts) *http.Server {
	d := DefaultTimeouts
	mux := http.NewServeMux()
	mux.Handle(PathPrefix, h)
	return &http.Server{
		Addr:              addr,
		Handler:           mux,
		ReadHeaderTimeout: cmpOr(t.ReadHeader, d.ReadHeader),
		ReadTimeout:       cmpOr(t.Read, d.Read),
		WriteTimeout:      cmpOr(t.Write, d.Write),
		IdleTimeout:       cmpOr(t.Idle, d.Idle),
		MaxHeaderBytes:    64 << 10,
	}
}

func cmpOr(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}
