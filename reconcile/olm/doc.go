// Package olm is olmsync's embedded OLM controllers: one controller-runtime reconciler per
// OLM kind (catalogsource/, subscription/, installplan/, csv/, operatorgroup/) that applies
// the decisions of the pure core in the top-level olm/ packages — catalogs, upgrade graphs,
// resolution, OperatorGroup membership and API intersection, CSV phases, install strategy —
// to a cluster with OLM's own phases, reasons and status strings. The offline `olmsync
// check` calls the same core on what it rendered from Git, so the CI preview and the
// cluster decide alike; nothing here decides what the core does not.
package olm
