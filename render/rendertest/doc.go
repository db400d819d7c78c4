// Package rendertest writes generated GitOps repositories for tests and benchmarks of the
// render stage and the stages after it: clusters with a cluster-scope overlay each and many
// individual apps, all found through Argo CD Applications, sized to order (the issue's
// benchmark repository is 25 clusters of 12 apps: 300 apps, 5,000 objects).
package rendertest
