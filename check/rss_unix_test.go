//go:build unix

package check

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSMB is a finished process's peak resident set size in MB (getrusage's ru_maxrss:
// kilobytes on Linux, bytes on macOS).
func peakRSSMB(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	kb := float64(ru.Maxrss)
	if runtime.GOOS == "darwin" {
		kb /= 1024
	}
	return kb / 1024
}
