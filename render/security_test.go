package render

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/olmsync/olmsync/sources"
)

// TestRemoteBasesOffMakesNoNetworkCall points a kustomization at a server on loopback,
// once as a remote file and once as a remote git base: with remote bases off, the app
// fails naming the kustomization and the server sees no request. With them on, the same
// file is fetched (so the server would notice a call).
func TestRemoteBasesOffMakesNoNetworkCall(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/cm.yaml" {
			_, _ = fmt.Fprint(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: remote\n")
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()

	tests := []struct {
		name, ref string
	}{
		{"remote file", srv.URL + "/cm.yaml"},
		{"remote git base", srv.URL + "/org/repo.git//base?ref=main"},
		{"scp-style git base", "git@" + strings.TrimPrefix(srv.URL, "http://") + ":org/repo.git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, root := memRepo(t, files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\n- " + tt.ref + "\n",
				"app/ns.yaml":            nsYAML,
			})
			app := appNamed(t, renderRepo(t, fsys, root, Options{}), "app")
			var be *BuildError
			if !errors.As(app.Err, &be) || !errors.Is(app.Err, ErrRemoteDisabled) {
				t.Fatalf("err = %v, want ErrRemoteDisabled", app.Err)
			}
			if be.File != "app/kustomization.yaml" || be.Line != 3 || !strings.Contains(be.Error(), tt.ref) {
				t.Errorf("error %v does not point at app/kustomization.yaml:3 and %s", be, tt.ref)
			}
			// The flag that turns them on, not the Go option (issue 29); a Sync's reconciler
			// says it never does.
			if !strings.Contains(be.Error(), "(enable them with --allow-remote-bases)") {
				t.Errorf("error %v does not name --allow-remote-bases", be)
			}
			sync := appNamed(t, renderRepo(t, fsys, root, Options{Switches: SyncSwitches}), "app")
			if !strings.Contains(sync.Err.Error(), "(a Sync never fetches them: vendor the base into the repository)") {
				t.Errorf("a Sync's error %v does not say it never fetches them", sync.Err)
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the server got %d requests with remote bases off", n)
			}
		})
	}

	t.Run("allowed", func(t *testing.T) {
		fsys, root := memRepo(t, files{
			"app/kustomization.yaml": "resources:\n- ns.yaml\n- " + srv.URL + "/cm.yaml\n",
			"app/ns.yaml":            nsYAML,
		})
		app := appNamed(t, renderRepo(t, fsys, root, Options{AllowRemoteBases: true}), "app")
		if app.Err != nil {
			t.Fatal(app.Err)
		}
		if hits.Load() == 0 || len(app.Objects) != 2 {
			t.Errorf("remote file allowed: %d requests, %d objects; want the ConfigMap fetched", hits.Load(), len(app.Objects))
		}
	})
}

// execScript writes an exec KRM function that touches marker (proof it ran) and emits the
// items it got plus, as a generator, one ConfigMap.
func execScript(t *testing.T, marker string) string {
	t.Helper()
	return `#!/bin/sh
touch '` + marker + `'
cat >/dev/null
cat <<'EOF'
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: generated
EOF
`
}

func writeExecutable(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestExecPlugins(t *testing.T) {
	ksops := "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata:\n  name: secrets\nfiles:\n- secret.enc.yaml\n"
	tests := []struct {
		name        string
		field       string // generators or transformers
		config      string
		opts        Options
		wantRun     bool
		wantErr     error
		wantObjects []string
		wantWarning string
		wantHint    string
	}{
		{
			name: "exec generator is skipped with a warning when exec plugins are off", field: "generators",
			config: execFunction("Gen", "gen", "./gen.sh"), wantObjects: []string{"Namespace/ns"},
			wantWarning: `generator Gen "gen" (example.com/v1) needs an exec plugin`,
		},
		{
			name: "ksops generator is skipped with a warning naming it", field: "generators",
			config: ksops, wantObjects: []string{"Namespace/ns"},
			// In the CLI's words (issue 29: it said Options.EnableExecPlugins), with what
			// to do about KSOPS in particular.
			wantWarning: `generator ksops "secrets" (viaduct.ai/v1) needs an exec plugin (enable them with --enable-exec-plugins)`,
			wantHint:    "KSOPS decrypts SOPS-encrypted Secrets",
		},
		{
			name: "exec transformer is refused and not run", field: "transformers",
			config: execFunction("Fix", "fix", "./gen.sh"), wantErr: ErrPluginDisabled,
		},
		{
			name: "exec generator runs when exec plugins are on", field: "generators",
			config: execFunction("Gen", "gen", "./gen.sh"), opts: Options{EnableExecPlugins: true},
			wantRun: true, wantObjects: []string{"Namespace/ns", "ConfigMap/generated"},
		},
		{
			name: "container plugins on do not let exec plugins run", field: "generators",
			config: execFunction("Gen", "gen", "./gen.sh"), opts: Options{EnableContainerPlugins: true},
			wantObjects: []string{"Namespace/ns"}, wantWarning: "needs an exec plugin",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			fsys, root := diskRepo(t, files{
				"app/kustomization.yaml": "resources:\n- ns.yaml\n" + tt.field + ":\n- plugin.yaml\n",
				"app/ns.yaml":            nsYAML,
				"app/plugin.yaml":        tt.config,
			})
			writeExecutable(t, filepath.Join(root, "app", "gen.sh"), execScript(t, marker))
			res := renderRepo(t, fsys, root, tt.opts)
			app := appNamed(t, res, "app")
			if _, err := os.Stat(marker); (err == nil) != tt.wantRun {
				t.Errorf("plugin ran = %t, want %t", err == nil, tt.wantRun)
			}
			if tt.wantErr != nil {
				if !errors.Is(app.Err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", app.Err, tt.wantErr)
				}
				return
			}
			if app.Err != nil {
				t.Fatal(app.Err)
			}
			var got []string
			for _, o := range app.Objects {
				got = append(got, o.Kind()+"/"+o.Name())
			}
			if strings.Join(got, ",") != strings.Join(tt.wantObjects, ",") {
				t.Errorf("objects = %v, want %v", got, tt.wantObjects)
			}
			if tt.wantRun {
				gen := objectNamed(t, app, "ConfigMap", "generated")
				if gen.Source.File != "app/plugin.yaml" || gen.Source.GeneratedBy != "Gen" || gen.Source.Line != 1 {
					t.Errorf("generated object source = %+v, want app/plugin.yaml:1 by Gen", gen.Source)
				}
			}
			var found bool
			for _, w := range res.Warnings {
				if tt.wantWarning != "" && w.Reason == ReasonPluginSkipped && strings.Contains(w.Message, tt.wantWarning) &&
					w.File == "app/plugin.yaml" && w.Line == 1 {
					found = true
					if !strings.Contains(w.Hint, tt.wantHint) || (tt.wantHint == "") != (w.Hint == "") {
						t.Errorf("hint = %q, want one containing %q", w.Hint, tt.wantHint)
					}
				}
			}
			if found != (tt.wantWarning != "") {
				t.Errorf("warnings = %v, want one containing %q at app/plugin.yaml:1", res.Warnings, tt.wantWarning)
			}
			data, _ := os.ReadFile(filepath.Join(root, "app", "kustomization.yaml"))
			if !strings.Contains(string(data), tt.field+":\n- plugin.yaml") {
				t.Errorf("the user's kustomization was rewritten: %s", data)
			}
		})
	}
}

func TestInlineAndMixedGeneratorFiles(t *testing.T) {
	fsys, root := memRepo(t, files{
		"app/kustomization.yaml": `
resources:
- ns.yaml
generators:
- |-
  apiVersion: viaduct.ai/v1
  kind: ksops
  metadata:
    name: inline-secrets
- gens.yaml
`,
		"app/ns.yaml": nsYAML,
		"app/gens.yaml": `
apiVersion: builtin
kind: ConfigMapGenerator
metadata:
  name: kept
literals: [a=b]
---
apiVersion: viaduct.ai/v1
kind: ksops
metadata:
  name: file-secrets
`,
	})
	res := renderRepo(t, fsys, root, Options{})
	app := appNamed(t, res, "app")
	if app.Err != nil {
		t.Fatal(app.Err)
	}
	if len(app.Objects) != 2 || app.Objects[1].Kind() != "ConfigMap" || !strings.HasPrefix(app.Objects[1].Name(), "kept-") {
		t.Fatalf("objects = %v, want the namespace and the kept ConfigMap", app.Objects)
	}
	if src := app.Objects[1].Source; src.File != "app/gens.yaml" || src.Line != 1 || src.GeneratedBy != "ConfigMapGenerator" {
		t.Errorf("kept ConfigMap source = %+v", src)
	}
	var skipped []string
	for _, w := range res.Warnings {
		if w.Reason == ReasonPluginSkipped {
			skipped = append(skipped, fmt.Sprintf("%s:%d", w.File, w.Line))
		}
	}
	if strings.Join(skipped, " ") != "app/gens.yaml:7 app/kustomization.yaml:4" {
		t.Errorf("skipped generators at %v", skipped)
	}
}

// TestSymlinkOutOfRepository: a base that is a symbolic link to a folder outside the
// repository is refused, and nothing of that folder is rendered.
func TestSymlinkOutOfRepository(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "kustomization.yaml"), []byte("resources:\n- ns.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "ns.yaml"), []byte(nsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, root := diskRepo(t, files{
		"app/kustomization.yaml":  "resources:\n- ../linked\n",
		"file/kustomization.yaml": "resources:\n- secret.yaml\n",
	})
	if err := os.Symlink(outside, filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "ns.yaml"), filepath.Join(root, "file", "secret.yaml")); err != nil {
		t.Fatal(err)
	}
	res := renderRepo(t, fsys, root, Options{})
	for _, name := range []string{"app", "file"} {
		app := appNamed(t, res, name)
		if !errors.Is(app.Err, ErrOutsideRepository) {
			t.Errorf("app %s: err = %v, want ErrOutsideRepository", name, app.Err)
		}
	}
	// The error names the kustomization entry that leads out.
	var be *BuildError
	if err := appNamed(t, res, "file").Err; !errors.As(err, &be) || be.File != "file/kustomization.yaml" || be.Line != 2 ||
		err.Error() != `render app "file": file/kustomization.yaml:2: resources entry "secret.yaml": path leads outside the repository` {
		t.Errorf("app file: %v", err)
	}
}

func TestOverlayFSConfines(t *testing.T) {
	fsys, root := memRepo(t, files{"a/kustomization.yaml": kustomizationOf})
	if err := fsys.WriteFile("/elsewhere/secret", []byte("s")); err != nil {
		t.Fatal(err)
	}
	r, err := newRepo(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	o := newOverlayFS(r, map[string][]byte{"a/kustomization.yaml": []byte("replaced")}, false)
	if data, err := o.ReadFile(root + "/a/kustomization.yaml"); err != nil || string(data) != "replaced" {
		t.Errorf("replaced file = %q, %v", data, err)
	}
	if _, err := o.ReadFile("/elsewhere/secret"); !errors.Is(err, ErrOutsideRepository) {
		t.Errorf("read outside the repository: %v", err)
	}
	if _, err := o.ReadFile(root + "/../elsewhere/secret"); !errors.Is(err, ErrOutsideRepository) {
		t.Errorf("read through ..: %v", err)
	}
	if o.Exists("/elsewhere/secret") {
		t.Error("a file outside the repository exists")
	}
	if err := o.WriteFile(root+"/a/new.yaml", []byte("x")); err == nil || fsys.Exists(root+"/a/new.yaml") {
		t.Error("the overlay wrote to the repository")
	}
	if err := o.RemoveAll(root + "/a"); err == nil || !fsys.Exists(root+"/a/kustomization.yaml") {
		t.Error("the overlay removed from the repository")
	}
	f, err := o.Open(root + "/a/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() != int64(len("replaced")) {
		t.Errorf("stat of a replaced file = %v, %v", st, err)
	}
}

// TestSymlinkMessagesSayWhy: an app folder that is a symbolic link out of the repository
// said `app path "app": not found`, a loop a.yaml → b.yaml → a.yaml "not found" (issue 30).
// Each says what the link does.
func TestSymlinkMessagesSayWhy(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "cm.yaml"), []byte(nsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	_, dir := diskRepo(t, files{
		"olmsync.yaml":            "apps:\n- {name: out, path: out}\n- {name: loop, path: loop}\n",
		"loop/kustomization.yaml": "resources: [a.yaml]\n",
	})
	for _, l := range [][2]string{{outside, "out"}, {"b.yaml", "loop/a.yaml"}, {"a.yaml", "loop/b.yaml"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := sources.OpenWorkTree(dir, sources.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res := renderRepo(t, tree.FS, tree.Root, Options{})
	for app, want := range map[string]string{
		"out":  `app path "out": not found: path "out" is a symlink to "` + outside + `", outside the repository root`,
		"loop": `resources entry "a.yaml": loop/a.yaml not found: resolve loop/a.yaml: too many levels of symbolic links`,
	} {
		if a := appNamed(t, res, app); a.Err == nil || !strings.Contains(a.Err.Error(), want) || !errors.Is(a.Err, ErrNotFound) {
			t.Errorf("app %s: %v, want it to say %q", app, a.Err, want)
		}
	}
}
