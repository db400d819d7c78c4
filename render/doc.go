// Package render turns a GitOps repository into objects with provenance. It finds the apps
// (olmsync.yaml, else Argo CD Applications, else kustomization roots), groups them by
// destination cluster, and builds each in-process with kustomize (krusty) or, for a folder
// without a kustomization, reads its manifests as Argo CD would. Every object knows its
// app, its repository-relative file and the line its document starts on: kustomize reads
// each resource file with its documents marked, and the marks come back on the objects
// (source.go; kustomize's own origin annotations only where a plugin, a Helm chart or a
// remote base may make objects, as they cost a third of a check's CPU). The package is
// pure: a kustomize filesystem and a root in, objects out; it never writes the repository,
// never reaches the network and never runs a plugin unless Options turn that on, and one
// app failing to render never stops the others. What a change does to the OLM objects
// between two renders (a pull request's base and head) is report.DiffObjects's to say.
package render
