// Command olmsync makes operators installed through OLM safe to run by GitOps: it renders
// a Git repository's apps, checks them against the operator placement rules, and syncs
// them into a cluster through an embedded OLM.
//
// This package only wires flags to the packages that do the work; see docs/architecture.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/olmsync/olmsync/sources"
)

func main() {
	// An interrupt or SIGTERM cancels the command's context: `olmsync run` stops its
	// controllers cleanly (and releases its leader-election Lease).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		printError(os.Stderr, err)
		os.Exit(exitCode(err))
	}
}

// printError prints a command's error, unless it is a findings error: the command has
// already printed its report, and exit code 1 says the rest. The userinfo of any URL in
// it is redacted, whatever the scheme: a password typed into an argument (a repository,
// a catalog image) never comes back in an error.
func printError(w io.Writer, err error) {
	var findings *findingsError
	if !errors.As(err, &findings) {
		fmt.Fprintln(w, "Error:", sources.RedactURLs(err.Error()))
	}
}
