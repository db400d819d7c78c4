// Command olmsync makes operators installed through OLM safe to run by GitOps: it renders
// a Git repository's apps, checks them against the operator placement rules, and syncs
// them into a cluster through an embedded OLM.
//
// This package only wires flags to the packages that do the work; see docs/architecture.md.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		var findings *findingsError
		if !errors.As(err, &findings) {
			fmt.Fprintln(os.Stderr, "Error:", err)
		}
		os.Exit(exitCode(err))
	}
}
