// Package reconcile holds olmsync's controllers: gitsync, the Sync reconciler that keeps a
// cluster in step with a Git repository; under reconcile/olm the embedded OLM (a pure
// decision core and one controller per OLM kind around it); and here the manager that
// `olmsync run` starts with them (NewManager), the webhook receiver it serves, and the CRD
// install. The Sync reconciler's mechanics are packages of their own, with no manager or
// controller in them: inventory, apply, health, receiver and metrics.
package reconcile
