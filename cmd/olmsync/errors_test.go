package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/report"
)

// TestCheckBadInput runs the check command on a repository with one broken input at a
// time, next to an app that renders and breaks OP010. Each broken input is a problem that
// names its file (and line where there is one), the check exits 2, and the other app is
// still checked: its violation is reported.
func TestCheckBadInput(t *testing.T) {
	const config = "apps:\n- {name: good, path: good, namespace: good}\n- {name: bad, path: bad, namespace: bad}\n"
	good := map[string]string{
		"olmsync.yaml":          config,
		"good/installplan.yaml": installPlanYAML,
	}
	tests := []struct {
		name     string
		files    map[string]string
		symlink  [2]string // name in the repository → target
		args     []string
		wantFile string
		wantLine int
		wantMsg  string
	}{
		{
			name:     "malformed YAML",
			files:    map[string]string{"bad/subscription.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: [etcd\n"},
			wantFile: "bad/subscription.yaml", wantLine: 4,
			wantMsg: `render app "bad": bad/subscription.yaml:4: did not find expected ',' or ']'`,
		},
		{
			name:     "broken kustomization",
			files:    map[string]string{"bad/kustomization.yaml": "resources:\n- subscription.yaml\npatchez: []\n", "bad/subscription.yaml": subscriptionYAML},
			wantFile: "bad/kustomization.yaml", wantLine: 3,
			wantMsg: `unknown field "patchez"`,
		},
		{
			name:     "missing base",
			files:    map[string]string{"bad/kustomization.yaml": "resources:\n- subscription.yaml\n- ../bases/operators\n", "bad/subscription.yaml": subscriptionYAML},
			wantFile: "bad/kustomization.yaml", wantLine: 3,
			wantMsg: `resources entry "../bases/operators": bases/operators not found`,
		},
		{
			name:     "symbolic link out of the repository",
			files:    map[string]string{"bad/kustomization.yaml": "resources:\n- subscription.yaml\n"},
			symlink:  [2]string{"bad/subscription.yaml", "OUTSIDE"},
			wantFile: "bad/subscription.yaml",
			wantMsg:  "outside the repository",
		},
		{
			name:     "a user rule with a Rego error",
			files:    map[string]string{"bad/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"},
			args:     []string{"--policy", "POLICY"},
			wantFile: "POLICY/acme.rego", wantLine: 5,
			wantMsg: "rego_type_error: undefined function nope",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			gittest.Write(t, dir, good)
			gittest.Write(t, dir, tt.files)
			outside := filepath.Join(t.TempDir(), "subscription.yaml")
			if err := os.WriteFile(outside, []byte(subscriptionYAML), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.symlink[0] != "" {
				if err := os.Symlink(outside, filepath.Join(dir, tt.symlink[0])); err != nil {
					t.Fatal(err)
				}
			}
			policyDir := filepath.Join(t.TempDir(), "acme")
			gittest.Write(t, policyDir, map[string]string{"acme.rego": "package acme\n\n# a typo\ndeny contains msg if {\n\tmsg := nope(input)\n}\n"})
			args := append([]string{dir}, tt.args...)
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "POLICY", policyDir)
			}
			wantFile := strings.ReplaceAll(tt.wantFile, "POLICY", policyDir)

			r, err := checkJSON(t, args...)
			wantExit(t, err, exitUsage)
			if len(r.Problems) != 1 {
				t.Fatalf("problems: %+v", r.Problems)
			}
			p := r.Problems[0]
			if p.File != wantFile || p.Line != tt.wantLine || !strings.Contains(p.Message, tt.wantMsg) || !strings.Contains(p.Message, wantFile) {
				t.Errorf("problem %+v\nwant file %s, line %d, a message naming the file and containing %q", p, wantFile, tt.wantLine, tt.wantMsg)
			}
			var got []string
			for _, v := range r.Violations {
				got = append(got, v.Rule+" "+v.App+" "+v.File)
			}
			if diff := cmp.Diff([]string{"OP010 good good/installplan.yaml"}, got); diff != "" {
				t.Errorf("the app that renders is not checked (-want +got):\n%s", diff)
			}
			if r.Summary.Result != report.ResultIncomplete {
				t.Errorf("result %s", r.Summary.Result)
			}

			// For people: the text report names the file, and the command says why it exits 2.
			out, err := run(t, append([]string{"check"}, args...)...)
			wantExit(t, err, exitUsage)
			for _, want := range []string{"Problems: input that could not be read or rendered", wantFile, "good/installplan.yaml", "Error: check incomplete: 1 input could not be read"} {
				if !strings.Contains(out, want) {
					t.Errorf("text output does not contain %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestCheckBrokenConfig: a broken olmsync.yaml leaves nothing to render; the report says
// where it is broken and the check exits 2.
func TestCheckBrokenConfig(t *testing.T) {
	dir := t.TempDir()
	gittest.Write(t, dir, map[string]string{"olmsync.yaml": "apps:\n- name: a\n  path: a\n  colour: blue\n"})
	r, err := checkJSON(t, dir)
	wantExit(t, err, exitUsage)
	if len(r.Problems) != 1 || r.Problems[0].File != "olmsync.yaml" || r.Problems[0].Line != 4 ||
		!strings.Contains(r.Problems[0].Message, `unknown field "colour"`) {
		t.Errorf("problems %+v", r.Problems)
	}
	out, err := run(t, "check", dir, "-o", "github")
	wantExit(t, err, exitUsage)
	if !strings.Contains(out, "::error file=olmsync.yaml,line=4,") {
		t.Errorf("GitHub output:\n%s", out)
	}
}

// TestCredentialsInArgumentsNotEchoed: a password typed into a URL argument of any scheme
// is not printed back in the error, which names the URL redacted.
func TestCredentialsInArgumentsNotEchoed(t *testing.T) {
	for _, args := range [][]string{
		{"check", "ftp://user:hunter22@host/x"},
		{"apps", "ftp://user:hunter22@host/x"},
		{"check", "git://user:hunter22@host/x", "-o", "json"},
		{"catalog", "validate", "ftp://user:hunter22@host/x"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, err := run(t, args...)
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			if strings.Contains(out, "hunter22") {
				t.Errorf("the password is in the output:\n%s", out)
			}
			if !strings.Contains(out, "://***@") {
				t.Errorf("the output does not name the URL, redacted:\n%s", out)
			}
		})
	}
}
