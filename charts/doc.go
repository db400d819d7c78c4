// Package charts holds olmsync's Helm chart (the folder olmsync/ beside this file), embedded
// in the binary for `olmsync install`, and renders it with helm's own library — the same
// loader, values coalescing, schema validation, template engine and install order as
// `helm install` — into the objects to apply.
package charts
