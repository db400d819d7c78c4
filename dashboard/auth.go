package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Identity is who made a request, as the API server's TokenReview said.
type Identity struct {
	Username string
	UID      string
	Groups   []string
	Extra    map[string]authenticationv1.ExtraValue
}

// anonymous is the identity of a read without a token when anonymous reads are on.
var anonymous = &Identity{Username: "system:anonymous"}

// cacheTTL is how long a TokenReview's or a SubjectAccessReview's answer is reused: a
// list refreshed by a stream of changes would otherwise review the same token many
// times a second. A revoked token or right takes effect within it.
const cacheTTL = 10 * time.Second

// maxCached bounds each cache of answers; when full it is emptied (answers are cheap to
// get again, and a flood of made-up tokens must not grow memory).
const maxCached = 4096

// Auth asks the API server who a token is (TokenReview) and what it may do
// (SubjectAccessReview), with short-lived caches of the answers.
type Auth struct {
	// Client creates TokenReviews and SubjectAccessReviews: it needs create on both.
	Client client.Client

	mu     sync.Mutex
	tokens map[string]cached[*Identity]
	rights map[string]cached[bool]
	now    func() time.Time
}

type cached[T any] struct {
	v  T
	at time.Time
}

func (a *Auth) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

// bearerToken is the token of the Authorization header; "" without one.
func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// maxTokenLength bounds a token: longer is no token the API server issues.
const maxTokenLength = 16 << 10

// Authenticate reviews a token: its identity, or errUnauthenticated when there is none or
// the API server does not accept it.
func (a *Auth) Authenticate(ctx context.Context, token string) (*Identity, error) {
	if token == "" || len(token) > maxTokenLength {
		return nil, errUnauthenticated
	}
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:]) // the token itself is never kept
	a.mu.Lock()
	if c, ok := a.tokens[key]; ok && a.clock().Sub(c.at) < cacheTTL {
		a.mu.Unlock()
		if c.v == nil {
			return nil, errUnauthenticated
		}
		return c.v, nil
	}
	a.mu.Unlock()
	tr := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	if err := a.Client.Create(ctx, tr); err != nil {
		return nil, fmt.Errorf("review the token: %w", err)
	}
	var id *Identity
	if tr.Status.Authenticated {
		u := tr.Status.User
		id = &Identity{Username: u.Username, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	}
	a.mu.Lock()
	if a.tokens == nil || len(a.tokens) >= maxCached {
		a.tokens = map[string]cached[*Identity]{}
	}
	a.tokens[key] = cached[*Identity]{id, a.clock()}
	a.mu.Unlock()
	if id == nil {
		return nil, errUnauthenticated
	}
	return id, nil
}

// Allowed asks whether id may do what attrs say, as kubectl would be asked.
func (a *Auth) Allowed(ctx context.Context, id *Identity, attrs authorizationv1.ResourceAttributes) (bool, error) {
	groups := slices.Clone(id.Groups)
	slices.Sort(groups)
	key := strings.Join([]string{id.Username, id.UID, strings.Join(groups, ","), attrs.Verb, attrs.Group, attrs.Resource,
		attrs.Namespace, attrs.Name, attrs.Subresource}, "\x00")
	a.mu.Lock()
	if c, ok := a.rights[key]; ok && a.clock().Sub(c.at) < cacheTTL {
		a.mu.Unlock()
		return c.v, nil
	}
	a.mu.Unlock()
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range id.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &attrs, User: id.Username, UID: id.UID, Groups: id.Groups, Extra: extra,
	}}
	if err := a.Client.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("review the access: %w", err)
	}
	allowed := sar.Status.Allowed && !sar.Status.Denied
	a.mu.Lock()
	if a.rights == nil || len(a.rights) >= maxCached {
		a.rights = map[string]cached[bool]{}
	}
	a.rights[key] = cached[bool]{allowed, a.clock()}
	a.mu.Unlock()
	return allowed, nil
}

// describe names what attrs are about, as kubectl's messages do: resource "name" in
// namespace.
func describe(attrs authorizationv1.ResourceAttributes) string {
	what := attrs.Resource
	if attrs.Group != "" {
		what += "." + attrs.Group
	}
	if attrs.Name != "" {
		what += fmt.Sprintf(" %q", attrs.Name)
	}
	if attrs.Namespace != "" {
		what += " in namespace " + attrs.Namespace
	}
	return what
}

// WriteHeader is the header every write must carry: a page of another origin cannot
// send it without a CORS preflight, which the dashboard never grants.
const WriteHeader = "X-Olmsync-Request"

// sameOrigin checks a write against cross-site request forgery: the WriteHeader must be
// there, and the browser's Sec-Fetch-Site and Origin, when sent, must say the request
// comes from the dashboard's own origin.
func sameOrigin(r *http.Request) error {
	if r.Header.Get(WriteHeader) == "" {
		return &Error{Status: http.StatusForbidden, Message: "a write must carry the " + WriteHeader + " header"}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return &Error{Status: http.StatusForbidden, Message: "cross-site write refused (Sec-Fetch-Site: " + site + ")"}
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		host := origin
		if _, rest, ok := strings.Cut(origin, "://"); ok {
			host = rest
		}
		if host != r.Host {
			return &Error{Status: http.StatusForbidden, Message: "cross-origin write refused (Origin " + origin + ")"}
		}
	}
	return nil
}
