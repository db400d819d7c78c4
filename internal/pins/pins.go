//go:build pins

// Package pins keeps the design card's dependencies in go.mod, at the versions that build
// with Go 1.26, while the packages that will use them are being written. `go mod tidy`
// reads every build tag, so these imports hold the requirements; the `pins` tag keeps this
// file out of every build. Delete an import once real code imports that module.
package pins

import (
	_ "github.com/fluxcd/pkg/runtime/conditions"
	_ "github.com/fluxcd/pkg/runtime/patch"
	_ "github.com/go-git/go-git/v5"
	_ "github.com/go-git/go-git/v5/plumbing/transport/http"
	_ "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "github.com/open-policy-agent/opa/v1/rego"
	_ "github.com/open-policy-agent/opa/v1/tester"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "sigs.k8s.io/kustomize/api/krusty"
	_ "sigs.k8s.io/kustomize/kyaml/filesys"
)
