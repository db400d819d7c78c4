//go:build !unix

package olmtest

// PeakRSS cannot be read on this platform.
func PeakRSS() (int64, bool) { return 0, false }
