// Package builds tests the two builds of olmsync as the processes users run:
// bin/olmsync, the light build (check, apps, catalog, bundle), and bin/olmsync-cluster, the
// full build to which olmsync hands run, install, the verbs on Syncs and check
// --kubeconfig. `make test` builds both and names the light one in OLMSYNC_BIN.
package builds

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func binaries(t *testing.T) (light, full string) {
	t.Helper()
	light = os.Getenv("OLMSYNC_BIN")
	if light == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("OLMSYNC_BIN is not set: run `make test`, which builds the binaries")
		}
		t.Skip("OLMSYNC_BIN is not set: `make build` builds bin/olmsync and bin/olmsync-cluster")
	}
	return light, filepath.Join(filepath.Dir(light), "olmsync-cluster")
}

func run(t *testing.T, env []string, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

func examples(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", "gitops")
}

// TestOneCommandTwoBuilds: users type olmsync for every command. The light build checks
// as the full build does (the same report, byte for byte), and hands the verbs that talk
// to a cluster to the full build: their help and errors are the full build's.
func TestOneCommandTwoBuilds(t *testing.T) {
	light, full := binaries(t)
	// The same report, byte for byte, from either build: a plain check, which the light
	// build runs itself, and checks with the OLM preview — named on the command line or in
	// olmsync.yaml — which it hands to the full build.
	for _, tc := range []struct {
		name     string
		args     []string
		previews bool
	}{
		{name: "check", args: []string{"check", examples(t), "-o", "json"}},
		{name: "check --catalog", args: []string{"check", examples(t), "--catalog", "community-operators=" + filepath.Join(examples(t), "catalog"), "-o", "json"}, previews: true},
		{name: "check, olmsync.yaml naming a catalog", args: []string{"check", withCatalogInConfig(t), "-o", "json"}, previews: true},
	} {
		lightReport, lightExit := run(t, nil, light, tc.args...)
		fullReport, fullExit := run(t, nil, full, tc.args...)
		previews := strings.Contains(fullReport, `"subscriptions"`)
		if lightExit != 0 || fullExit != 0 || lightReport != fullReport || previews != tc.previews {
			t.Errorf("%s: the same report from both builds: %v; previews %v, want %v; exit %d and %d\n--- light\n%s\n--- full\n%s",
				tc.name, lightReport == fullReport, previews, tc.previews, lightExit, fullExit, lightReport, fullReport)
		}
	}
	if out, _ := run(t, nil, light, "get", "syncs", "--help"); !strings.Contains(out, "Show the Syncs of a namespace") {
		t.Errorf("olmsync get syncs --help is not the full build's:\n%s", out)
	}
	if out, code := run(t, nil, light, "check", examples(t), "--kubeconfig", filepath.Join(t.TempDir(), "none")); code != 2 || !strings.Contains(out, "--kubeconfig: load kubeconfig") {
		t.Errorf("check --kubeconfig was not read by the full build (exit %d):\n%s", code, out)
	}
	if out, _ := run(t, nil, light, "--help"); !strings.Contains(out, "run         Run the controllers") || !strings.Contains(out, "check       Render a GitOps repository") {
		t.Errorf("olmsync --help does not list every command:\n%s", out)
	}
}

// TestLightBuildAlone: without olmsync-cluster beside it or on the PATH, a verb of the full
// build says what to install.
func TestLightBuildAlone(t *testing.T) {
	light, _ := binaries(t)
	alone := filepath.Join(t.TempDir(), "olmsync")
	data, err := os.ReadFile(light)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + t.TempDir(), "OLMSYNC_CLUSTER_BIN="}
	for _, args := range [][]string{
		{"get", "syncs"},
		{"check", examples(t), "--catalog", "community-operators=" + filepath.Join(examples(t), "catalog")},
		{"check", withCatalogInConfig(t)},
	} {
		out, code := run(t, env, alone, args...)
		if code != 2 || !strings.Contains(out, "this command runs olmsync-cluster, which is neither beside olmsync nor on the PATH") {
			t.Errorf("olmsync %s: exit %d:\n%s", strings.Join(args, " "), code, out)
		}
	}
	// Without a preview, the light build checks on its own.
	if out, code := run(t, env, alone, "check", examples(t)); code != 0 {
		t.Errorf("olmsync check without olmsync-cluster: exit %d:\n%s", code, out)
	}
}

// withCatalogInConfig is a copy of examples/gitops whose olmsync.yaml names its catalog
// for the OLM preview (catalogs:), as a repository that previews on every check does.
func withCatalogInConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(examples(t))); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "olmsync.yaml")
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, "catalogs:\n- name: community-operators\n  source: catalog\n"...)
	if err := os.WriteFile(config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
