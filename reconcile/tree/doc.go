// Package tree builds the tree of what a Sync manages, for `olmsync tree sync`, `olmsync
// events` and the dashboard: the objects of its inventory and, below each Subscription,
// the chain OLM made for it (InstallPlan → CSV → Deployments, and on request each
// Deployment's ReplicaSets and their Pods), below each CSV of the inventory its
// Deployments, and below each OperatorGroup the namespaces it targets; a Subscription
// names the CatalogSource it resolves from. Every node says whether it could be read
// and, where it could, its OLM-aware health (reconcile/health), phase and reason.
// Inventory objects take their sync status and health from the Sync's status.apps, as
// the reconciler wrote them; only OLM's kinds (and the workloads below their
// Deployments) are read, through whatever reader the caller has (the API server for the
// CLI, the manager's cache for the dashboard).
package tree
