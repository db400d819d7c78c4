// Package plans decides what becomes of a namespace's resolution before anything is
// written: whether the namespace may be resolved at all (exactly one OperatorGroup), how
// the resolution is cut into one InstallPlan per Subscription (Split), and how each plan
// is approved (DecideApproval, with olmsync's pinned-csv and first-automatic annotations).
// The Subscription controller and `olmsync check`'s preview both call it, so the plan a
// pull request's preview shows is the plan the cluster makes.
package plans
