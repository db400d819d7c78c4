// Package apply puts a Sync's objects into the cluster and takes away the ones it no longer
// renders. Objects go in with server-side apply (field manager "olmsync", forcing
// ownership of the fields Git sets) in stages, each complete before the next begins:
// Namespaces, CRDs and cluster RBAC (the CRDs then waited for until established);
// OperatorGroups and CatalogSources; Subscriptions; everything else. A custom resource
// whose kind the API server does not serve yet, but which an operator this Sync subscribes
// to will install, waits (WaitingForCRD) instead of failing.
//
// Drift is found the way server-side apply itself sees it: a dry-run apply of the object
// from Git is compared with the live object, so fields other managers own (OLM's status,
// the annotations and labels OLM adds) are merged in on both sides and never count; a
// short list of fields OLM rewrites is left out of the comparison too (see ignoredFields).
// Only an object that differs is applied for real, so an unchanged repository writes
// nothing. Prune deletes only inventory entries whose live object still carries this
// Sync's labels and does not opt out (olmsync.dev/prune: disabled).
//
// The package holds no manager or controller: a client.Client in (impersonating a service
// account where the Sync says so), per-object results out, for a reconciler's apply and
// prune steps and for `olmsync diff`.
package apply
