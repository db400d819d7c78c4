package memguard

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestEffectiveUnderAddressSpaceLimit: under `ulimit -v` the ceiling is what the limit
// leaves the heap, not a larger --memory-limit (issue 30: a check with --memory-limit 2Gi
// under ulimit -v 3000000 died with "fatal error: out of memory" at a heap of 1.07 GB,
// before the watch saw 90% of 2Gi). The process runs in a child, whose limit it sets.
func TestEffectiveUnderAddressSpaceLimit(t *testing.T) {
	if os.Getenv("MEMGUARD_TEST_CHILD") == "1" {
		mapped, ok := mappedBytes()
		if !ok {
			fmt.Println("no /proc/self/statm")
			os.Exit(3)
		}
		limit := mapped + 1<<30 // 1 GiB more than the process has mapped
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		c := Effective(4<<30, "--memory-limit 4Gi")
		fmt.Printf("%d|%s\n", c.Bytes, c.From)
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEffectiveUnderAddressSpaceLimit$")
	cmd.Env = append(os.Environ(), "MEMGUARD_TEST_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	bytes, from, _ := strings.Cut(strings.TrimSpace(strings.Split(string(out), "\n")[0]), "|")
	n, err := strconv.ParseUint(bytes, 10, 64)
	if err != nil {
		t.Fatalf("child said %q", out)
	}
	// 1 GiB left, four fifths of it for the heap (give or take what the child mapped
	// between its reading and ours).
	if n > 1<<30 || n < 700<<20 || !strings.Contains(from, "address-space limit") {
		t.Errorf("ceiling %s from %q, want about 819Mi from the address-space limit", Bytes(n), from)
	}
	if c := Effective(4<<30, "--memory-limit 4Gi"); c.From != "--memory-limit 4Gi" && !strings.Contains(c.From, "cgroup") {
		t.Errorf("without an address-space limit the ceiling is %s", c)
	}
}
