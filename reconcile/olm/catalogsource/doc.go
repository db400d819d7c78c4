// Package catalogsource is the CatalogSource controller and the in-process registry of the
// catalogs it loads.
//
// The controller reads each CatalogSource's content — a ConfigMap in OLM's ConfigMap catalog
// format (sourceType configmap or internal), or the file-based catalog of a catalog image
// (sourceType grpc with spec.image), pulled with go-containerregistry, cached by digest and
// re-polled on spec.updateStrategy.registryPoll.interval — and keeps it in a Registry. Its
// status says how that went in OLM's words: connectionState.lastObservedState READY,
// CONNECTING or TRANSIENT_FAILURE and lastConnect. A catalog that breaks keeps serving its last
// good content; the status and the registry entry say why it is stale.
//
// The Registry is what the Subscription and InstallPlan controllers read catalogs from:
// Catalogs gives resolve.Catalog values and Resolver a resolve.Resolver over all of them,
// rebuilt only when a catalog changed. The registry is updated before the CatalogSource's
// status is written, so a controller that watches CatalogSources and reads the registry on a
// status change sees the new content.
package catalogsource
