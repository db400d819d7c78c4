// Package crds embeds the CustomResourceDefinitions that controller-gen generates from
// the types in api/ (`make generate` writes them here and copies them into the Helm
// chart). The envtest suites and the embedded controllers install exactly these.
package crds
