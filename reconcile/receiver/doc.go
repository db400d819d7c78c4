// Package receiver is the webhook endpoint a Git server calls on a push:
// POST /hooks/<namespace>/<sync>. A request is verified against the Secret the Sync's
// spec.webhook names (key "token"): GitHub's X-Hub-Signature-256, the HMAC-SHA256 of the
// body under the token, or GitLab's X-Gitlab-Token, the token itself; both compared in
// constant time. A verified request triggers an immediate reconcile through a callback
// (RequestReconcile sets the Sync's reconcile.olmsync.dev/requestedAt annotation, as
// `olmsync reconcile sync` does). Everything else — no such Sync, no webhook configured,
// an empty token, a missing or wrong signature — is refused with one and the same 401, so
// the endpoint tells an outsider nothing about which Syncs exist; the reason is logged,
// never the token or the body.
package receiver
