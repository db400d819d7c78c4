package hack_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBenchGoals runs benchgoals.sh (the end of `make bench`) over benchmark lines as
// go test prints them: each ratio it knows is printed beside its goal with "met" or
// "NOT met", the ratios without a goal as such, a benchmark that did not run as "not run",
// and the input is passed through.
func TestBenchGoals(t *testing.T) {
	input := strings.Join([]string{
		"goos: linux",
		"BenchmarkSteadyState-2   	       1	87305493994 ns/op	     22315 api-requests	        44.74 s-to-steady-state	" +
			"2.876 x-writes-only	         3.671 x-apiserver-cpu	         4.492 x-write-only	       131.3 manager-heap-MB",
		"BenchmarkManySyncs-2   	       1	123 ns/op	         1.8 x-apply-only",
		"PASS",
	}, "\n") + "\n"
	cmd := exec.Command("bash", "benchgoals.sh")
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchgoals.sh: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"BenchmarkSteadyState-2",
		"OLM steady state (500 Subscriptions) / write-only         4.492   goal <= 2     NOT met",
		"API server CPU for it, controllers / write-only         3.671   (no goal)",
		"writes of the controllers alone / write-only            2.876   (no goal)",
		"OLM manager peak heap above the baseline (MiB)          131.300   goal <= 150   met",
		"200 Syncs x 50 objects after a commit / apply alone       1.800   goal <= 2     met",
		"check time / krusty-alone render floor                  not run",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
