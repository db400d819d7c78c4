// Package hack_test tests the scripts of hack/ that decide whether CI passes.
package hack_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeGo stands in for the go command in fuzz.sh's PATH: `go list` names one package whose
// folder holds FuzzTarget, and `go test -fuzz` answers as the mode file says, one line per
// run (the first line for the first run, and so on): "pass", "race" (Go's coordinator
// race: a bare context deadline exceeded, nothing saved), or "crash" (a failing input
// saved under testdata/fuzz, as go test does).
const fakeGo = `#!/usr/bin/env bash
set -eu
case "$1" in
list)
	if [ "$2" = -f ]; then echo "$FAKE_DIR"; else echo example.test/p; fi ;;
test)
	n=$(( $(cat "$FAKE_DIR/runs" 2>/dev/null || echo 0) + 1 ))
	echo "$n" > "$FAKE_DIR/runs"
	mode=$(sed -n "${n}p" "$FAKE_DIR/modes")
	case "$mode" in
	pass)
		echo "fuzz: elapsed: 2s, execs: 700 (350/sec), new interesting: 0 (total: 3)"
		echo PASS ;;
	race)
		echo "fuzz: elapsed: 2s, execs: 948 (449/sec), new interesting: 13 (total: 16)"
		echo "--- FAIL: FuzzTarget (2.11s)"
		echo "    context deadline exceeded"
		echo FAIL
		exit 1 ;;
	crash)
		mkdir -p "$FAKE_DIR/testdata/fuzz/FuzzTarget"
		echo "go test fuzz v1" > "$FAKE_DIR/testdata/fuzz/FuzzTarget/0123abcd"
		echo "--- FAIL: FuzzTarget (0.52s)"
		echo "    --- FAIL: FuzzTarget (0.00s)"
		echo "        x_test.go:9: boom"
		echo "    Failing input written to testdata/fuzz/FuzzTarget/0123abcd"
		echo FAIL
		exit 1 ;;
	esac ;;
esac
`

// runFuzz runs fuzz.sh with the fake go command answering modes, and returns its output,
// whether it passed, and how many fuzz runs it made.
func runFuzz(t *testing.T, modes ...string) (string, bool, int) {
	t.Helper()
	bin, pkg := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "x_test.go"), []byte("package p\n\nfunc FuzzTarget(f *testing.F) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "modes"), []byte(strings.Join(modes, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "fuzz.sh", "2s", "./fake")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_DIR="+pkg, "FUZZ_RUN=", "FUZZ_FRESH_CORPUS=")
	out, err := cmd.CombinedOutput()
	if exit := (*exec.ExitError)(nil); err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	runs, _ := os.ReadFile(filepath.Join(pkg, "runs")) // absent: no run
	n, _ := strconv.Atoi(strings.TrimSpace(string(runs)))
	return string(out), err == nil, n
}

// TestFuzzScript: a target that passes is counted; any failure — a failing input saved, or
// the bare "context deadline exceeded" Go 1.26's fuzz coordinator could end a run with
// (go.dev/issue/75804, which the script ran again until the module moved to Go 1.27, where it
// is fixed) — fails the script at once, with the run's output.
func TestFuzzScript(t *testing.T) {
	for _, tc := range []struct {
		modes    []string
		pass     bool
		runs     int
		contains string
	}{
		{modes: []string{"pass"}, pass: true, runs: 1, contains: "FuzzTarget: 700 execs"},
		{modes: []string{"race", "pass"}, pass: false, runs: 1, contains: "FuzzTarget: FAILED"},
		{modes: []string{"crash", "pass"}, pass: false, runs: 1, contains: "x_test.go:9: boom"},
	} {
		t.Run(strings.Join(tc.modes, "-"), func(t *testing.T) {
			out, pass, runs := runFuzz(t, tc.modes...)
			if pass != tc.pass || runs != tc.runs || !strings.Contains(out, tc.contains) {
				t.Errorf("passed %v after %d runs, want %v after %d, with %q in the output:\n%s", pass, runs, tc.pass, tc.runs, tc.contains, out)
			}
		})
	}
}
