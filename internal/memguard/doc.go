// Package memguard keeps a process under a memory ceiling it can survive: it sets the Go
// runtime's soft limit (debug.SetMemoryLimit), so that the collector works harder as the
// heap nears it, and watches the heap, calling back once when it passes the ceiling's
// threshold, so that the caller cancels the work at fault (a policy evaluation, a
// render) and says which, instead of the runtime dying with "fatal error: out of memory"
// or the machine running out of memory. `olmsync check --memory-limit` uses it.
package memguard
