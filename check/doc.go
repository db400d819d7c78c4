// Package check is the check of one revision of a GitOps repository: the step that the
// offline `olmsync check` and the Git-watching Sync reconciler share, so that CI and the
// cluster decide alike. Run renders every app (render), maps the result into one policy
// input per cluster, evaluates the built-in placement rules and users' rules over it
// (policy), then runs any further Stages (the OLM preview is one) that add findings and
// report sections. Report assembles the versioned Report document from a checked
// revision and, for a pull request, its base: violations marked new or pre-existing and
// the OLM objects the change adds, removes or modifies. Nothing the repository holds can
// stop the check of the rest: an app that does not render, a broken olmsync.yaml, a user
// rule with a Rego error each become a Problem naming the file (the check is then
// incomplete, exit code 2), and everything else is still checked. Source opens what the
// CLI names: a folder, a committed revision of it, or a remote repository; Change checks a
// pull request, its base then its head, sharing the caches between them.
package check
