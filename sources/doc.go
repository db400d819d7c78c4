// Package sources brings a GitOps repository to the rest of the pipeline as a filesystem:
// a local working tree, a committed revision read with go-git straight from the object
// store, or a remote repository fetched into a cache. It tracks revisions and keeps every
// path inside the repository root.
//
// Status: arrives with the `olmsync check` issue (#3); nothing here yet.
package sources
