// Package ociimage builds olmsync's container image without a Docker engine: it compiles
// the binary static (CGO_ENABLED=0) for each platform and assembles an OCI image with
// go-containerregistry from two layers it writes itself — a base of /etc/passwd and
// /etc/group with the nonroot user (65532), a CA bundle from the pinned Go module
// golang.org/x/crypto/x509roots/fallback, /tmp and the user's home, and no shell — and the
// binary. Every timestamp is SOURCE_DATE_EPOCH's and every input is pinned, so the same
// source gives the same digest. `make image` runs it (hack/image) and writes an OCI layout
// and a tarball that `crane push` and `docker load` take.
package ociimage
