package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestProfileFlags: the hidden --cpuprofile and --memprofile write pprof profiles (gzipped
// protocol buffers naming their sample types) of the command that ran, as main writes
// them when the command ends.
func TestProfileFlags(t *testing.T) {
	t.Cleanup(func() { profiles = profileFlags{} })
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"olmsync.yaml":                 "apps:\n- {name: cluster-scope, path: cluster-scope}\n",
		"cluster-scope/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n",
	})
	cpu, mem := filepath.Join(t.TempDir(), "cpu.out"), filepath.Join(t.TempDir(), "mem.out")
	if out, err := run(t, "check", dir, "--cpuprofile", cpu, "--memprofile", mem); err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	profiles.finish()
	for path, sampleType := range map[string]string{cpu: "nanoseconds", mem: "alloc_space"} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: not a gzipped profile: %v", filepath.Base(path), err)
		}
		body, err := io.ReadAll(zr)
		if err != nil || !bytes.Contains(body, []byte(sampleType)) {
			t.Errorf("%s: want a profile of %s (err %v, %d bytes)", filepath.Base(path), sampleType, err, len(body))
		}
	}

	if _, err := run(t, "check", dir, "--cpuprofile", filepath.Join(dir, "no", "such", "cpu.out")); err == nil {
		t.Error("--cpuprofile into a missing folder: want an error")
	}
}
