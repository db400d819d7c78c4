// Package compare holds only tests: the comparison of `olmsync check`'s OLM preview with
// the embedded OLM controllers. Each case (a catalog, namespaces, OperatorGroups and
// Subscriptions, from a seeded generator), and each cluster of each repository of
// examples/, is previewed offline and applied to a real API server running the
// controllers, and the two outcomes are compared field by field per
// Subscription (ResolutionFailed, currentCSV, installedCSV, the InstallPlan, the CSV's
// phase and reason) and per OperatorGroup (status.namespaces). It imports both check/ and
// reconcile/, which only a test package may.
package compare
