// Package operators gathers the versions of OLM's operators.coreos.com API group: the
// scheme that registers all of them, and strict decoding of OLM manifests that reports
// every field the types do not know instead of dropping it silently.
package operators
