// Package resolve decides what OLM installs: for every Subscription of a namespace, the CSV
// it gets next, the path to its channel head and, when it gets nothing, why — with the
// dependencies that come along and the InstallPlan steps that install them. It is plain Go
// over plain data (catalogs loaded by olm/catalog, the namespace's Subscriptions
// and CSVs), so the Subscription and InstallPlan controllers and the offline `olmsync check`
// decide alike.
//
// The API is three calls:
//
//	r := resolve.New(catalogs, resolve.Options{GlobalNamespace: "olm"}) // once per catalog set
//	res := r.Resolve(resolve.Namespace{Name: ns, Subscriptions: subs, CSVs: csvs})
//	plan, err := resolve.NewPlan(res)                                     // the InstallPlan's content
//
// Resolve returns, per Subscription, a Resolution: Resolved (Next is installed, replacing the
// installed CSV), UpToDate (the installed CSV is the channel head) or Failed with a Reason —
// OLM's ConstraintsNotSatisfiable or ErrorPreventedResolution with OLM's message, or
// olmsync's UpgradeHeld and NoUpgradePath where OLM silently stays on the installed CSV. A
// controller writes the first two as the Subscription's ResolutionFailed condition. Result
// also lists the Bundles to install and the Subscriptions generated for dependencies;
// NewPlan turns them into status.plan steps (CSVs, then CRDs, then everything else, RBAC
// with OLM's names and labels, generated Subscriptions) and bundle lookups for bundles the
// catalog knows only by image; BundleSteps makes the steps of one bundle once its content is
// unpacked.
//
// How it decides (../shared/olm-behaviour.md sections 1 and 5; the seeds where they speak):
//   - A Subscription's candidates come from its catalog (spec.source, spec.sourceNamespace),
//     package and channel (the default channel first and the others by name when it names
//     none), each channel head first with skipped entries dropped. With an installed CSV only
//     entries that replace it, skip it or whose skipRange holds its version are candidates,
//     then the installed CSV itself; for such an upgrade, other visible catalogs follow by
//     seed 004's order of precedence (their heads, then their other entries), which OLM's
//     code does not do. Without one, spec.startingCSV picks the entry.
//   - A dependency (olm.gvk.required, olm.package.required with a blang/semver range,
//     olm.label.required, olm.constraint) prefers installed CSVs, then the catalog of the
//     bundle that has it, then higher priority, then the namespace's catalogs, then name;
//     within a catalog default channels first, then package and channel name, heads first.
//   - The namespace is solved as a whole: at most one bundle per package, at most one
//     provider per API, installed CSVs no Subscription references stay, and a search in
//     preference order takes the first set that meets every constraint — so no API is left
//     without a provider and no upgrade breaks an installed operator (seed 001). A failure
//     is explained by a minimal set of constraints in OLM's words ("constraints not
//     satisfiable: ..."). Unlike OLM, a Subscription that cannot be resolved fails alone and
//     the rest of the namespace goes ahead (docs/olm.md says why).
package resolve
