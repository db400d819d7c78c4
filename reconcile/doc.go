// Package reconcile holds olmsync's controllers: the Git-watching Sync reconciler and,
// under reconcile/olm, the embedded OLM (a pure decision core and the controllers around it).
//
// Status: the OLM decision core, the OLM controllers and the Sync reconciler arrive with
// issues #4, #5 and #6; nothing here yet.
package reconcile
