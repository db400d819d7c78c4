//go:build !unix

package check

import "os"

// peakRSSMB is not measured where getrusage is not available.
func peakRSSMB(*os.ProcessState) float64 { return 0 }
