// Package notify posts what a Sync did with a revision to the forge the revision came
// from, as a commit status, so that the author of a merged change sees on the commit (and
// its pull request) whether the cluster applied it: GitHub's commit statuses API
// (POST /repos/{owner}/{repo}/statuses/{sha}) and GitLab's (POST
// /projects/{id}/statuses/{sha}), with a token from a Secret. Building the request is pure
// (Request), sending it is Post; the Sync reconciler decides when (a revision's outcome
// changed) and records the result in the Sync's status.
package notify
