// Package metrics is what the Sync reconciler tells Prometheus, in the style of Flux's
// gotk_* metrics so that Flux's dashboards and alerts read it: the reconcile duration
// (gotk_reconcile_duration_seconds, through fluxcd/pkg/runtime/metrics) and a per-Sync
// info gauge (gotk_resource_info, one series per Sync with its ready and suspended state,
// URL and revision as labels), plus olmsync's own: how long git fetches take and how many
// objects apply and prune touched. A Recorder registers on controller-runtime's registry
// (MustRegister), which the manager serves at /metrics.
package metrics
