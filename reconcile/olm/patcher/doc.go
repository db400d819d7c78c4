// Package patcher writes what one reconcile changed in an object it read from the manager's
// cache: its metadata and spec, then its status, each as a JSON merge patch from the copy
// read, only when something changed, and each carrying the resourceVersion of that copy. A
// copy older than the API server's object — the cache not yet showing the controller's own
// last write, or someone else's — is refused with 409 Conflict instead of writing a
// difference computed from an outdated base (a field the reconcile clears that the newer
// object holds would be no difference and stay). The event of the newer version queues the
// object again, and that reconcile reads it; so the controllers read the object they
// reconcile from the cache, as controller-runtime controllers do, and not past it.
// Superseded lets a controller skip even computing such a write: it remembers the version
// its own last write replaced, so a reconcile that reads that version stops at once.
//
// fluxcd/pkg/runtime's patch helper, which the Sync reconciler uses, sends its metadata,
// spec and status patches without a resourceVersion (only its conditions patch carries one,
// and on a conflict it reads the object again and retries), so a patch from a stale cached
// copy would land; that is why these controllers have this instead.
package patcher
