//go:build !unix

package sources

import "context"

// lockFile is a no-op where flock does not exist: fetches still wait for
// each other within one process.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
