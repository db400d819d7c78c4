// Command olmsync makes operators installed through OLM safe to run by GitOps: it renders
// a Git repository's apps, checks them against the operator placement rules, and syncs
// them into a cluster through an embedded OLM.
//
// This package only wires flags to the packages that do the work; see docs/architecture.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		printError(os.Stderr, err)
		os.Exit(exitCode(err))
	}
}

// printError prints a command's error, unless it is a findings error: the command has
// already printed its report, and exit code 1 says the rest.
func printError(w io.Writer, err error) {
	var findings *findingsError
	if !errors.As(err, &findings) {
		fmt.Fprintln(w, "Error:", err)
	}
}
