// Package ocitest is the OCI registry of the tests: go-containerregistry's registry served
// over HTTPS on loopback (the way registries are reached outside tests; olmsync refuses
// plain HTTP unless told otherwise), with repositories that may sit behind basic auth,
// blobs it can be told to serve corrupted, and a count of what it served. It builds the
// images the tests push: bundle images from bundle folders (manifests/ and metadata/ at
// the image root, the annotations as labels, as opm builds them), catalog images from an
// FBC, and images of arbitrary files. Builds are reproducible: the same folder gives the
// same digest.
//
// It is imported by _test files only; nothing in the product depends on it.
package ocitest
