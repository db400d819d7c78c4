// Package inventory is the record of what a Sync applied: one entry per object, identified
// as Flux identifies it ("<namespace>_<name>_<group>_<kind>", plus the API version it was
// applied with), stored in the Sync's status. It decides, as plain data, what the next
// inventory is and which objects are stale — applied by this Sync before and no longer
// rendered — so that prune deletes nothing else. The desired state it compares against can
// only be made from a reconcile's fetch outcome and render result (DesiredOf), and refuses
// to yield deletions after a failed fetch or an app that did not render. It never talks to
// the API server; the deleting is reconcile/apply's.
package inventory
