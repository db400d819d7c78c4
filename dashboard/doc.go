// Package dashboard is olmsync's Argo-style dashboard of the running reconciler: an
// http.Handler that `olmsync run --dashboard-addr` serves beside the controllers, built on
// their manager (OnManager) and added to it by the command. Its JSON
// API under /api/v1/ lists the Syncs and their apps (sync status, OLM-aware health,
// revision and commit, last sync, violations), shows one Sync as a tree and a resource
// graph (Sync → app → objects, Subscription → InstallPlan → CSV → Deployments →
// ReplicaSets → Pods, OperatorGroup → target namespaces, CatalogSource → Subscriptions;
// reconcile/tree), an object's live manifest, conditions and Events, its desired manifest
// at the applied revision with its file and line, its diff against Git (reconcile/diff,
// the code of `olmsync diff sync`), a Subscription's upgrade graph from the catalog the
// embedded OLM loaded (olm/catalog), the Sync's violations with links to the forge, its
// history and the Events of its objects, and streams changes as server-sent events fed by
// the manager's informers. Reads of state come from the manager's cache; nothing lists
// the API server per request. No answer holds a Secret's values: they are masked in
// manifests, diffs and files.
//
// Writes — reconcile now, suspend, resume, approve a Manual InstallPlan — need a bearer
// token that a TokenReview accepts and a SubjectAccessReview allows the verb kubectl
// would need (patch syncs, update installplans), a same-origin request carrying the
// X-Olmsync-Request header, and are logged with the caller's identity. Reads need the
// same token (with get/list on what they show) unless anonymous reads are on.
//
// The frontend in ui/ is plain HTML, CSS and ES modules embedded with embed; it uses only
// the JSON API.
package dashboard
