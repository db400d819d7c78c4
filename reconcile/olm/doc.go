// Package olm is olmsync's embedded OLM: a pure decision core — catalogs (catalog/), upgrade
// graphs, resolution of Subscriptions and their dependencies, OperatorGroup membership and
// API intersection — written as plain Go over plain data with table tests, and around it one
// controller-runtime reconciler per OLM kind that applies those decisions to a cluster with
// OLM's own phases, reasons and status strings. The offline `olmsync check` calls the same
// core on what it rendered from Git, so the CI preview and the cluster decide alike.
package olm
