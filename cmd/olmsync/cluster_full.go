//go:build !olmsync_light

package main

import "github.com/spf13/cobra"

// clusterCommands are the commands of clusterVerbs, as this build runs them.
func clusterCommands() []*cobra.Command {
	return append([]*cobra.Command{markGraceful(newRunCommand()), newInstallCommand()}, newSyncCommands()...)
}

// handOff and handOffCompletion are for the light build: the full build runs every
// command itself.
func handOff(*cobra.Command) error { return nil }

func handOffCompletion() {}
