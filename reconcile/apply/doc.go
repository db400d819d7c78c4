// Package apply puts a Sync's objects into the cluster and takes away the ones it no longer
// renders. Objects go in with server-side apply (field manager "olmsync", forcing
// ownership of the fields Git sets) in stages, each complete before the next begins:
// Namespaces, CRDs and cluster RBAC (the CRDs then waited for until established);
// OperatorGroups and CatalogSources; Subscriptions; everything else. A custom resource
// whose kind the API server does not serve yet, but which an operator this Sync subscribes
// to will install, waits (WaitingForCRD) instead of failing.
//
// Each object goes through Flux's server-side apply engine (github.com/fluxcd/pkg/ssa, the
// ResourceManager Flux's kustomize-controller uses): a dry-run apply compared with the live
// object after ssa's normalisation, so fields other managers own (OLM's status, the
// annotations and labels OLM adds) are merged in on both sides and never count; the fields
// OLM rewrites are drift-ignore rules (driftIgnoreRules); only an object that differs is
// applied for real, so an unchanged repository writes nothing; an immutable field is
// recreated under Force or Flux's force annotation; kubectl's client-side apply managers and
// last-applied annotation are handed over, as Flux does. Drift lists which fields differed,
// for messages and `olmsync diff`. Prune is olmsync's own: it deletes only inventory entries
// whose live object still carries this Sync's labels and does not opt out
// (olmsync.dev/prune: disabled), the very object read (a UID precondition), with a dry run
// and a reason for every entry kept — none of which ssa's DeleteAll offers.
//
// The package holds no manager or controller: a client.Client in (impersonating a service
// account where the Sync says so), per-object results out, for a reconciler's apply and
// prune steps and for `olmsync diff`.
package apply
