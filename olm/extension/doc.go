// Package extension is OLM v1's catalog resolution as olmsync previews it: the
// olm.operatorframework.io/v1 ClusterExtension and ClusterCatalog kinds (typed, decoded
// strictly), and the pure decision operator-controller's catalog resolver makes — which
// bundle of which ClusterCatalog a ClusterExtension installs, given its package, version
// range (Masterminds constraints, as OLM v1 parses them), channels, catalog selector and
// upgrade constraint policy, and the bundle the cluster already runs — with OLM v1's own
// error messages. No controller serves these kinds in olmsync; `olmsync check` previews
// them (check/preview).
package extension
