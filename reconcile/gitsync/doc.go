// Package gitsync is the Sync reconciler: it keeps a cluster in step with the apps of a Git
// repository (docs/spec/sync.md). One reconcile runs five named steps, each owning one
// negative-polarity condition:
//
//	fetch   → FetchFailed        go-git into a cache; a failure keeps the last applied revision
//	build   → BuildFailed,       render and check with the code `olmsync check` runs; enforce
//	          PolicyViolation    mode keeps what an unwaived error names out of the apply
//	apply   → ApplyFailed        server-side apply in stages, as the Sync's service account
//	prune   → PruneFailed        only the inventory, never after a failed fetch, build or apply
//	health  → HealthCheckFailed  OLM-aware health of every applied object, status.apps
//
// and summarize decides Ready from them. The mechanics are other packages' (sources, check,
// reconcile/apply, inventory, health, metrics); this one decides when each runs. Between two
// drift-correction intervals, a reconcile that finds no new revision, generation or
// request reuses the last apply and only looks at health (applyDue), so that polling a
// Subscription while it installs costs a read per object, not a render and a dry-run apply.
//
// BuildRevision and Select are the one place a revision is narrowed to a Sync; `olmsync
// diff sync` calls them too, so that what it says a reconcile would do is what it does.
package gitsync
