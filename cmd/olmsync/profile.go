package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profileFlags are the hidden --cpuprofile and --memprofile of every command: a profile
// of the real binary on a real repository, which is what performance work starts from
// (`olmsync check --cpuprofile cpu.out .`, then `go tool pprof bin/olmsync cpu.out`).
type profileFlags struct {
	cpu, mem string
	stop     func()
}

var profiles profileFlags

func (p *profileFlags) register(root *cobra.Command) {
	fl := root.PersistentFlags()
	fl.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to this file")
	fl.StringVar(&p.mem, "memprofile", "", "write a heap profile (allocations) of the command to this file when it ends")
	_ = fl.MarkHidden("cpuprofile")
	_ = fl.MarkHidden("memprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return p.start() }
}

func (p *profileFlags) start() error {
	if p.mem != "" {
		runtime.MemProfileRate = 64 << 10 // every 64 KB allocated, as the test harness's -memprofile
	}
	if p.cpu == "" {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	p.stop = func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
	return nil
}

// finish writes what was asked for; main calls it whatever the command returned.
func (p *profileFlags) finish() {
	if p.stop != nil {
		p.stop()
	}
	if p.mem == "" {
		return
	}
	f, err := os.Create(p.mem)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--memprofile:", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "--memprofile:", err)
	}
}
