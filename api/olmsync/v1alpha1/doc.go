// Package v1alpha1 contains olmsync's own API, olmsync.dev/v1alpha1: the Sync kind, which
// points olmsync at a Git repository, says which of its apps to deploy and how strictly to
// apply the placement rules, and reports what was fetched, applied and pruned, every app's
// sync status and OLM-aware health, and the policy violations found.
//
// The condition types, reasons, annotations and labels that olmsync writes and reads are
// constants here, so that the reconciler, the CLI and the dashboard agree on every string.
// docs/spec/sync.md is the user's reference.
//
// +kubebuilder:object:generate=true
// +groupName=olmsync.dev
package v1alpha1
