// Package render builds each app of a repository with kustomize in-process and returns
// its objects with provenance (app, file, line). It is pure: a filesystem in, objects out.
//
// Status: arrives with the `olmsync check` issue (#3); nothing here yet.
package render
