// Package policy evaluates the rendered objects of every app with OPA: the built-in Rego
// rules that enforce the operator placement ADR, and users' own rules.
//
// Status: arrives with the `olmsync check` issue (#3); nothing here yet.
package policy
