// Package hostile runs the built olmsync binary, as a process, on inputs an attacker
// would send: YAML that expands, Rego that grows without end, names that lie, links that
// leave the repository. Each run is under `ulimit -v 3000000` (a CI runner's memory is
// finite) and a kill timeout, and must end with exit 2, a message naming the file or the
// rule at fault, no "fatal error" from the Go runtime, and a peak resident size under half
// the address-space limit. `make hostile` builds the binary and runs it (OLMSYNC_BIN); the
// table it logs is what the closing notes quote.
package hostile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// addressSpaceKB is the `ulimit -v` every run is under.
	addressSpaceKB = 3000000
	// killAfter ends a run that hangs.
	killAfter = 120 * time.Second
	// maxPeakKB is the peak resident size a run must stay under.
	maxPeakKB = addressSpaceKB / 2
)

// input is one hostile input: the repository it is (files, or written by write), the
// arguments of olmsync after the repository, and what the output must say.
type input struct {
	name  string
	files map[string]string
	write func(t *testing.T, dir string)
	args  []string
	// says are strings the output (stdout and stderr) must hold: the file or rule at fault.
	says []string
}

func TestHostileInputs(t *testing.T) {
	bin := os.Getenv("OLMSYNC_BIN")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("OLMSYNC_BIN is not set: run `make hostile`, which builds the binary")
		}
		t.Skip("OLMSYNC_BIN is not set: `make hostile` builds the binary and runs this")
	}
	var table []string
	for _, in := range inputs() {
		t.Run(in.name, func(t *testing.T) {
			dir := t.TempDir()
			if in.files != nil {
				writeFiles(t, dir, in.files)
			}
			if in.write != nil {
				in.write(t, dir)
			}
			for i, a := range in.args {
				in.args[i] = strings.ReplaceAll(a, "$DIR", dir)
			}
			r := runUnderLimits(t, bin, append([]string{"check", dir, "-o", "text"}, in.args...))
			table = append(table, fmt.Sprintf("| %s | %d | %d MB | %.2f s |", in.name, r.exit, r.peakKB/1024, r.wall.Seconds()))
			if r.exit != 2 {
				t.Errorf("exit %d, want 2", r.exit)
			}
			if strings.Contains(r.output, "fatal error") || strings.Contains(r.output, "goroutine ") {
				t.Errorf("the Go runtime died:\n%s", head(r.output))
			}
			for _, want := range in.says {
				if !strings.Contains(r.output, want) {
					t.Errorf("output does not say %q:\n%s", want, head(r.output))
				}
			}
			if r.peakKB > maxPeakKB {
				t.Errorf("peak resident size %d MB, over %d MB", r.peakKB/1024, maxPeakKB/1024)
			}
		})
	}
	t.Logf("\n| input | exit | peak RSS | wall |\n|---|---|---|---|\n%s", strings.Join(table, "\n"))
}

type result struct {
	exit   int
	output string
	peakKB int64
	wall   time.Duration
}

// runUnderLimits runs olmsync under `ulimit -v` (a shell sets it, then execs olmsync, so
// the limit is olmsync's own and its children's) and a kill timeout.
func runUnderLimits(t *testing.T, bin string, args []string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), killAfter)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$@"`, addressSpaceKB), "olmsync", bin}, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := result{output: out.String(), wall: time.Since(start), exit: -1}
	if ctx.Err() != nil {
		t.Errorf("killed after %s", killAfter)
	}
	if cmd.ProcessState != nil {
		r.exit = cmd.ProcessState.ExitCode()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.peakKB = ru.Maxrss
		}
	} else if err != nil {
		t.Fatalf("run olmsync: %v", err)
	}
	return r
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func head(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "…"
	}
	return s
}
