// Package subscription holds the decisions of the Subscription controller as pure functions
// over a Subscription's status: the health of the catalogs it can see
// (CatalogSourcesUnhealthy), what its InstallPlan's phase means for it (InstallPlanPending,
// InstallPlanFailed, InstallPlanMissing), what a resolution (olm/resolve) does to
// its state and conditions (ResolutionFailed, olmsync's UpgradeHeld), and who approves the
// InstallPlan made for it (its own installPlanApproval, a pinned CSV, first-automatic).
//
// OLM resolves a whole namespace at once and puts every Subscription's next step into one
// InstallPlan; approving it installs all of them. olmsync resolves the namespace the same
// way but makes one InstallPlan per Subscription (Split), so approving one Manual upgrade
// never installs another operator (OLM issues #2325, #1859). docs/olm.md lists this and the
// other deliberate differences.
//
// Nothing here talks to an API server: the reconciler reads the objects, calls these
// functions in the order OLM's catalog operator takes the same steps, and writes the status.
package subscription
