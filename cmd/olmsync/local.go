//go:build !nolocal && !olmsync_light

package main

import (
	"context"
	"io"

	"github.com/olmsync/olmsync/internal/localcluster"
)

// localSupported says whether this binary can start a control plane of its own.
const localSupported = true

// startLocal starts the control plane of `olmsync run --local`, with its state in dir,
// and returns its kubeconfig and how to stop it. Built unless the tag nolocal is set: the
// container image leaves it out, since importing envtest creates a folder at every start.
func startLocal(ctx context.Context, dir string, out io.Writer) (string, func() error, error) {
	c, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, Out: out})
	if err != nil {
		return "", nil, err
	}
	return c.Kubeconfig, c.Stop, nil
}
