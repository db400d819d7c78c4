//go:build olmsync_light

package preview

import (
	"context"
	"errors"
)

// ErrNoClusterAccess is what the light build of olmsync (the one `olmsync check` runs,
// built with the olmsync_light tag, which links no Kubernetes client) says when asked to
// read a live cluster; the command runs the full build for --kubeconfig and --context.
var ErrNoClusterAccess = errors.New("this build of olmsync reads no live cluster")

// ReadKubeconfig is live.go's, which the light build does not have.
func ReadKubeconfig(context.Context, Kubeconfig) (*ClusterState, error) {
	return nil, ErrNoClusterAccess
}
