//go:build unix

package olmtest

import (
	"runtime"
	"syscall"
)

// PeakRSS is the process's maximum resident set size in bytes (getrusage ru_maxrss, which
// Linux reports in KiB and macOS in bytes); false where it cannot be read.
func PeakRSS() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss, true
	}
	return ru.Maxrss * 1024, true
}
