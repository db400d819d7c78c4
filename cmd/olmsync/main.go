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
	"time"

	"github.com/spf13/cobra"

	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/sources"
)

// gracefulShutdown marks a command (in its Annotations) that needs time to stop cleanly
// after a signal — `olmsync run` stops its controllers and releases its Lease. Every other
// command is a batch job that holds nothing worth finishing: it stops within
// promptStop of a signal.
const gracefulShutdown = "olmsync.dev/graceful-shutdown"

// promptStop is how long a batch command may take to return after SIGINT or SIGTERM
// before the process exits anyway: a render or a git status of a large repository is not
// interruptible everywhere, and CI runners and people expect a prompt stop.
const promptStop = time.Second

func main() {
	// A child this binary started to evaluate users' rules out of its way serves that
	// and exits here.
	policy.ServeSandboxIfAsked()
	handOffCompletion()
	root := newRootCommand()
	graceful := false
	if cmd, _, err := root.Find(os.Args[1:]); err == nil {
		graceful = cmd.Annotations[gracefulShutdown] != ""
	}
	// An interrupt or SIGTERM cancels the command's context.
	ctx, stop := withSignals(context.Background(), graceful, os.Stderr)
	err := root.ExecuteContext(ctx)
	profiles.finish()
	sig := stop()
	if sig != nil {
		// The shell's convention, which CI runners report: 128 + the signal's number.
		fmt.Fprintf(os.Stderr, "olmsync: stopped by %v\n", sig)
		os.Exit(exitForSignal(sig))
	}
	if err != nil {
		printError(os.Stderr, err)
		os.Exit(exitCode(err))
	}
}

// withSignals returns a context cancelled by the first SIGINT or SIGTERM, its cause the
// signal. A second signal exits at once; a batch command (not graceful) that has not
// returned promptStop after the first is exited too. stop ends the watch and returns the
// signal that cancelled the context, or nil.
func withSignals(parent context.Context, graceful bool, stderr io.Writer) (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	got := make(chan os.Signal, 1)
	go func() {
		var first os.Signal
		var deadline <-chan time.Time
		for {
			select {
			case <-done:
				return
			case sig := <-signals:
				if first != nil {
					fmt.Fprintf(stderr, "olmsync: %v again; exiting now\n", sig)
					os.Exit(exitForSignal(first))
				}
				first = sig
				got <- sig
				cancel(signalError{sig})
				if !graceful {
					deadline = time.After(promptStop)
				}
			case <-deadline:
				fmt.Fprintf(stderr, "olmsync: stopped by %v\n", first)
				os.Exit(exitForSignal(first))
			}
		}
	}()
	return ctx, func() os.Signal {
		signal.Stop(signals)
		close(done)
		cancel(nil)
		select {
		case sig := <-got:
			return sig
		default:
			return nil
		}
	}
}

// signalError is the cause of a context cancelled by a signal.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return "stopped by " + e.sig.String() }

// exitForSignal is 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM.
func exitForSignal(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitUsage
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

// markGraceful marks cmd as one that stops cleanly after a signal instead of promptly.
func markGraceful(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[gracefulShutdown] = "true"
	return cmd
}
