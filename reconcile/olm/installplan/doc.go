// Package installplan is the InstallPlan controller: it carries an InstallPlan through OLM's
// phases Planning, RequiresApproval, Installing, Complete and Failed, executing the steps of
// status.plan in order.
//
// The steps are the decision core's (resolve.NewPlan, resolve.BundleSteps, resolve.OrderSteps):
// the Subscription controller writes them when it creates a plan (New builds that object); a
// plan created without steps — by hand, from spec.clusterServiceVersionNames — gets them in
// Planning from the bundles of the catalogs the namespace sees (catalogsource.Registry). A step
// is Unknown until executed, then Created (this plan made the object) or Present (it existed
// and was brought up to date). CRDs are updated only when crdupgrade.Check allows it; a refused
// update, or a manifest that cannot be applied, fails the plan with OLM's condition Installed,
// reason InstallComponentFailed. Manual plans wait in RequiresApproval until spec.approved.
//
// Before a planned plan goes on, OLM's service-account query of its namespace runs
// (groups.ScopedServiceAccount): a namespace no OperatorGroup manages, or whose group's
// ServiceAccount is not found, holds the plan with Installed=False, InstallCheckFailed. A
// group naming a ServiceAccount makes a scoped install: the plan records the account in
// status.attenuatedServiceAccountRef and executes every step but its CRDs as that account
// (ScopedClients impersonates it), so the API server refuses what the account may not do and
// the plan retries until it may.
package installplan
