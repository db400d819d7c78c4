// Package metrics holds the Prometheus collectors of olmsync's embedded OLM, with OLM's own
// names, help texts and labels (OLM pkg/metrics; olm-behaviour section 7), so that the
// dashboards and alerts written for OLM keep working: csv_count, csv_succeeded, csv_abnormal
// and csv_upgrade_count, which the ClusterServiceVersion controller moves, and
// install_plan_count, subscription_count, subscription_sync_total and catalog_source_count,
// which the catalog controllers move. The four *_count gauges are counted in the manager's
// cache when scraped (CacheCount), not after every reconcile. They are registered once, on
// controller-runtime's metrics.Registry, so the manager's metrics endpoint serves them.
package metrics
