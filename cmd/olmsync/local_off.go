//go:build nolocal && !olmsync_light

package main

import (
	"context"
	"errors"
	"io"
)

const localSupported = false

func startLocal(context.Context, string, io.Writer) (string, func() error, error) {
	return "", nil, errors.New("--local: this olmsync was built without it (build tag nolocal); build with `make build`")
}
