// Package archtest holds the one-way import rule of the architecture (docs/architecture.md):
// cmd → reconcile → check → {sources, render, policy, olm}. Its test walks every package's
// non-test imports, transitively, and fails when an arrow runs the other way — for example
// when the pure OLM core under olm/ reaches a Kubernetes client or the controllers.
package archtest
