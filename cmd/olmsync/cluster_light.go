//go:build olmsync_light

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
)

// FullBuildEnv names the full build's executable; by default, olmsync-cluster beside this
// one, else on the PATH.
const FullBuildEnv = "OLMSYNC_CLUSTER_BIN"

// fullBuildName is the full build's file name.
const fullBuildName = "olmsync-cluster"

// clusterCommands are clusterVerbs, each handing its whole command line to the full build.
func clusterCommands() []*cobra.Command {
	out := make([]*cobra.Command, 0, len(clusterVerbs))
	for _, v := range clusterVerbs {
		out = append(out, &cobra.Command{
			Use: v.use, Short: v.short,
			DisableFlagParsing: true,
			RunE:               func(*cobra.Command, []string) error { return execFullBuild() },
		})
	}
	return out
}

// handOff runs the command in the full build when it reads a live cluster (`check
// --kubeconfig` or `--context`: this build links no Kubernetes client) or previews what
// OLM does (`--catalog`, `--cluster-state`: nor the OLM preview).
func handOff(cmd *cobra.Command) error {
	for _, flag := range []string{"kubeconfig", "context", "catalog", "cluster-state"} {
		if cmd.Flags().Changed(flag) {
			return execFullBuild()
		}
	}
	return nil
}

// execFullBuild replaces this process with the full build, with the same arguments and
// environment: its exit code, its output and the signals it gets are the command's.
func execFullBuild() error {
	exe, err := fullBuild()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, append([]string{exe}, os.Args[1:]...), os.Environ())
}

// fullBuild finds the full build: $OLMSYNC_CLUSTER_BIN, else olmsync-cluster beside this
// executable, else on the PATH.
func fullBuild() (string, error) {
	if exe := os.Getenv(FullBuildEnv); exe != "" {
		return exe, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), fullBuildName)
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, nil
		}
	}
	if exe, err := exec.LookPath(fullBuildName); err == nil {
		return exe, nil
	}
	return "", fmt.Errorf("this command runs %s, which is neither beside olmsync nor on the PATH (or set $%s): install both binaries of the release", fullBuildName, FullBuildEnv)
}

// handOffCompletion hands shell completion of a cluster verb (Sync names, read from the
// cluster) to the full build.
func handOffCompletion() {
	if len(os.Args) < 3 || (os.Args[1] != cobra.ShellCompRequestCmd && os.Args[1] != cobra.ShellCompNoDescRequestCmd) {
		return
	}
	for _, v := range clusterVerbs {
		if os.Args[2] == v.use {
			if err := execFullBuild(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(exitUsage)
			}
		}
	}
}
