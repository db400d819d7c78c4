//go:build !unix

package resolve_test

func peakRSS() (int64, bool) { return 0, false }
