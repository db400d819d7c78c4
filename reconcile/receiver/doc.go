// Package receiver is the webhook endpoint a Git server calls on a push:
// POST /hooks/<namespace>/<sync>. A request is verified against the Secret the Sync's
// spec.webhook names, with a key per provider: GitHub's X-Hub-Signature-256, the
// HMAC-SHA256 of the body under "github-token", or GitLab's X-Gitlab-Token, the value of
// "gitlab-token" (the old shared key "token" is still read, with a deprecation warning);
// both compared in constant time. A verified request that is not a replay (its delivery
// ID or body seen within the replay window) triggers an immediate reconcile through a
// callback (RequestReconcile sets the Sync's reconcile.olmsync.dev/requestedAt annotation,
// as `olmsync reconcile sync` does). Everything else — no such Sync, no webhook
// configured, an empty token, a missing or wrong signature — is refused with one and the
// same 401, so the endpoint tells an outsider nothing about which Syncs exist; the reason
// is logged, never the token or the body.
//
// What an outsider can cost is bounded before anything is read: a token bucket per client
// address (429), the server's read, write and idle timeouts (NewServer), a 5 MiB body; and
// the Sync and its Secret are found in the manager's cache (WebhookPathIndex,
// SecretCacheTransform), so that no request reads the API server.
package receiver
