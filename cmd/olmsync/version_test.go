package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err != nil {
		printError(&out, err)
	}
	return out.String(), err
}

func TestVersion(t *testing.T) {
	version, commit = "v1.2.3", "abc123"
	t.Cleanup(func() { version, commit = "", "" })

	out, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "olmsync v1.2.3\n") || !strings.Contains(out, "commit:     abc123") {
		t.Errorf("text output:\n%s", out)
	}

	out, err = run(t, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("json output %q: %v", out, err)
	}
	if b.Version != "v1.2.3" || b.GoVersion != runtime.Version() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("json output %+v", b)
	}

	if _, err := run(t, "version", "-o", "yaml"); err == nil || exitCode(err) != exitUsage {
		t.Errorf("unknown format: err = %v, want a usage error", err)
	}
}

func TestVersionWithoutLdflags(t *testing.T) {
	if got := currentBuildInfo().Version; got == "" {
		t.Error("version is empty without ldflags; want devel or the module version")
	}
}

func TestExitCode(t *testing.T) {
	if got := exitCode(&findingsError{"2 violations"}); got != exitFindings {
		t.Errorf("findings exit code = %d, want %d", got, exitFindings)
	}
	if got := exitCode(errFake); got != exitUsage {
		t.Errorf("other error exit code = %d, want %d", got, exitUsage)
	}
}

var errFake = errors.New("cannot read repository")

func TestHelpListsCommands(t *testing.T) {
	out, err := run(t, "help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "version") {
		t.Errorf("help does not list version:\n%s", out)
	}
}
