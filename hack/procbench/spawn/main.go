// Command spawn runs a command and prints, on its last line of standard error, the
// command's peak resident size (KB), its CPU time and its wall time (s):
//
//	spawn-rusage <maxrss-kb> <cpu-s> <wall-s>
//
// The benchmarks that measure olmsync as a process run it through spawn, a process of a
// few MB: Linux carries the resident peak of the process that forked a command into the
// command's own (a Go program starts its children with vfork, and exec records the shared
// memory's peak), so a command started by a large test binary reports that binary's size.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: spawn COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "spawn:", err)
		os.Exit(2)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var maxrss int64
	if ru != nil {
		maxrss = ru.Maxrss
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	fmt.Fprintf(os.Stderr, "\nspawn-rusage %d %.4f %.4f\n", maxrss, cpu.Seconds(), wall.Seconds())
	os.Exit(cmd.ProcessState.ExitCode())
}
