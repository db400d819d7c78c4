// Package catalog is the one place in olmsync that knows what an OLM catalog is. It reads
// every format OLM serves — file-based catalogs (JSON streams, YAML documents, directory
// trees), the package manifest format, bundle directories and folders of them, OLM's
// ConfigMap catalogs, and catalog images pulled from a registry or an OCI layout and cached
// by digest — into one model of packages, channels with their upgrade edges (replaces,
// skips, skipRange) and bundles with their properties, CSV and objects, each remembering the
// file and line it came from. It validates that model with the seeds' loading rules and
// operator-registry's graph rules, reporting every defect against its package, channel and
// bundle so that one broken package never makes the rest unusable; it orders a channel as
// OLM's resolver does; and it writes the model back out as FBC and as an upgrade graph.
// Everything here is pure: no API server, no controller, so the offline check and the
// embedded OLM controllers read catalogs through the same code.
package catalog
