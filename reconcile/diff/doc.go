// Package diff says what a reconcile of a Sync would do to the cluster now, writing
// nothing: `olmsync diff sync`. It runs the reconciler's own steps without their writes —
// the fetch request and service-account client of reconcile/gitsync, BuildRevision (so the
// same apps, policy mode and gating), reconcile/apply's dry run and dry-run prune — and
// classifies each object:
//
//	created    not in the cluster; an apply would create it
//	changed    in the cluster and different from Git; a unified diff of the live object
//	           and the dry-run apply's answer says where
//	unchanged  in the cluster as Git has it
//	gated      an unwaived error of a placement rule keeps it out (enforce mode)
//	waiting    its kind is not served yet, and its CRD is on its way
//	failed     the API server would refuse it (or its prune)
//	skipped    an earlier apply stage would fail, so it would not be tried
//	pruned     applied before, no longer rendered, and spec.prune deletes it
//	left       applied before and no longer rendered, but left in place: prune is off,
//	           an object would be refused, or the object opts out of prune
//
// The diff leaves out what Drift leaves out (server-written metadata, status, the fields
// OLM rewrites) and masks the values of Secrets. Compute, the classification and
// rendering, needs no cluster; Sync gathers its input from one.
package diff
