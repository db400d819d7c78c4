// Package preview is the OLM preview of `olmsync check`: a check.Stage that says, for every
// Subscription and OperatorGroup a revision declares, what OLM would do with it on each
// cluster — which CSV it installs or upgrades to and along which path, what comes along as
// dependencies, and the phase and reason the CSV would reach — and turns what would fail
// into violations (OLM001…) on the Subscription's file and line, so that CI fails before
// the merge rather than the cluster after it. It decides nothing itself: catalogs are read
// by olm/catalog, Subscriptions resolved by olm/resolve and
// OperatorGroup membership, install modes and API intersection judged by
// olm/groups, the same code the embedded OLM controllers run. What it adds is
// the view those functions need: the catalogs named by `--catalog` and olmsync.yaml, the
// cluster as a snapshot (`--cluster-state`), read from a live cluster with list calls only
// (`--kubeconfig`, through a connection that refuses anything but reads) or empty, with
// the objects in Git laid over it, and — for a pull request — the base revision's outcome taken as what the cluster
// runs, so that the preview can say what the change does. Inputs are those views as a
// command line names them, and Load reads them once for both revisions.
package preview
