package memguard

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// DefaultLimit is --memory-limit's default, of olmsync check and olmsync run: a check of
// a 300-app, 5,000-object repository with the 7,022-bundle community catalog peaks at
// 190 MB, so ten times that leaves room for any real repository and still stops a runaway
// rule long before a CI runner's memory is gone.
const DefaultLimit = 2 << 30

// Ceiling is the memory a process may use, and what sets it.
type Ceiling struct {
	// Bytes is the ceiling; 0 when nothing sets one.
	Bytes uint64
	// From says what set it, for messages: "--memory-limit 2Gi", "the address-space
	// limit (ulimit -v)", "the cgroup's memory limit".
	From string
}

// Effective is the smallest of the ceilings that bound the process: requested (the
// caller's own, named by from; 0 for none), what its address-space limit (RLIMIT_AS, `ulimit
// -v`) leaves for the heap, and its cgroup's memory limit. A limit the runtime cannot
// reach would not save the process: with `ulimit -v 3000000`, a check died with "fatal
// error: out of memory" at a heap of 0.84 to 1.07 GB, far under a requested 2Gi.
func Effective(requested uint64, from string) Ceiling {
	c := Ceiling{Bytes: requested, From: from}
	if as, ok := addressSpaceHeap(); ok && (c.Bytes == 0 || as < c.Bytes) {
		c = Ceiling{Bytes: as, From: "the address-space limit (ulimit -v) less what the process has mapped"}
	}
	if cg, ok := cgroupLimit(); ok && (c.Bytes == 0 || cg < c.Bytes) {
		c = Ceiling{Bytes: cg, From: "the cgroup's memory limit"}
	}
	return c
}

// String is the ceiling as messages give it: "2Gi (--memory-limit)".
func (c Ceiling) String() string {
	if c.Bytes == 0 {
		return "none"
	}
	return fmt.Sprintf("%s (%s)", Bytes(c.Bytes), c.From)
}

// addressSpaceHeap is what RLIMIT_AS leaves the heap: the limit less what the process has
// mapped already (the Go runtime reserves much of its address space up front), of which
// the heap gets four fifths (its arenas grow in 64 MB steps, and a slice that grows maps
// its new array before it frees the old one).
func addressSpaceHeap() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil || rl.Cur == ^uint64(0) || rl.Cur == 0 {
		return 0, false
	}
	mapped, ok := mappedBytes()
	if !ok || mapped >= rl.Cur {
		return 1, true // nothing left: every allocation may be the last
	}
	return (rl.Cur - mapped) / 5 * 4, true
}

// mappedBytes is the process's virtual size, from /proc/self/statm.
func mappedBytes() (uint64, bool) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	pages, err := strconv.ParseUint(string(bytes.Fields(data)[0]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}

// cgroupLimit is the memory limit of the process's cgroup (v2 memory.max, else v1
// memory.limit_in_bytes), nine tenths of it for the heap; false when there is none.
func cgroupLimit() (uint64, bool) {
	for _, file := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(data))
		if s == "max" {
			return 0, false
		}
		n, err := strconv.ParseUint(s, 10, 64)
		// cgroup v1 writes a page-rounded maximum int64 for "no limit"
		if err != nil || n == 0 || n >= 1<<62 {
			return 0, false
		}
		return n / 10 * 9, true
	}
	return 0, false
}
