// Package policy checks the rendered objects of a cluster's apps against the operator
// placement rules of the "Managing Operators" ADR (OP001–OP013), OP014 (a Subscription's
// catalog is where OLM looks), OP015 (a Subscription's startingCSV is a CSV name) and OP016
// (an OLM v1 ClusterExtension's namespace and service account in the cluster-scope app), Rego
// files in rego/ embedded in the binary, users' own Rego rules in the same deny/warn shape,
// and waivers.
// It defines the input document the rules read (Input; docs/policy.md), evaluates one
// such document per cluster with OPA queries compiled once, applies waivers in Go so they
// cover users' rules too, and returns violations with rule, severity, object, file and
// line. It knows nothing of how the objects were rendered: callers map their output into
// Input.
package policy
