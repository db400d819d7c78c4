// Package reconcile holds olmsync's controllers: under reconcile/olm the embedded OLM (a
// pure decision core and one controller per OLM kind around it), and here the manager that
// `olmsync run` starts with them (NewManager), the scheme they share and the CRD install.
//
// The Git-watching Sync reconciler joins them with issue #6. Its mechanics are packages of
// their own, with no manager or controller in them: inventory, apply, health, receiver and
// metrics.
package reconcile
