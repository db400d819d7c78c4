// Package olmtest is the harness of the embedded OLM's end-to-end tests and benchmarks: it
// starts a manager running every OLM controller against the envtest control plane
// (internal/testenv), builds ConfigMap catalogs of small operators whose upgrade graphs a
// test describes (replaces, skips, olm.skipRange, owned and required CRDs), and plays the
// parts envtest lacks — the kubelet and the Deployment controller — by marking the
// operators' Deployments Available, and a Service's pods by serving a webhook or an
// aggregated API from the test process behind an EndpointSlice (ServeBehindService).
//
// It is imported by _test files only; nothing in the product depends on it.
package olmtest
