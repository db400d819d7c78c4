package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
)

// inputs are the hostile inputs of issue 30 and of the round before it.
func inputs() []input {
	return []input{
		{
			name:  "alias amplification: 16 files of 8 KB, one input (an anchor of 4,000 scalars, 95 aliases each)",
			write: amplified(16, "discovery:\n  uncoveredRoots: apps\n"),
			says:  []string{"thing.yaml: the app's build reads", "YAML nodes, aliases expanded"},
		},
		{
			name:  "alias amplification: 16 files of 8 KB, 16 library roots",
			write: amplified(16, ""),
			says:  []string{"thing.yaml: the app's build reads", "YAML nodes, aliases expanded"},
		},
		{
			name:  "one 2 MB resource of 990,000 scalars",
			write: scalars(1),
			says:  []string{"big0/thing.yaml: the app's build reads 990014 YAML nodes"},
		},
		{
			name:  "8 resources of 990,000 scalars",
			write: scalars(8),
			says:  []string{"/thing.yaml: the app's build reads 990014 YAML nodes"},
		},
		{
			name: "a Rego rule whose replace() grows a string (--policy)",
			files: map[string]string{
				"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": configMap,
				"policies/grow.rego": growRule,
			},
			args: []string{"--policy", "$DIR/policies"},
			says: []string{"grow.rego", "rule ACME666 (acme.grow) stopped the policy sandbox"},
		},
		{
			name: "a Rego rule whose replace() grows a string (the repository's olmsync.yaml)",
			files: map[string]string{
				"olmsync.yaml":           "policy:\n  rules: [policies]\n",
				"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": configMap,
				"policies/grow.rego": growRule,
			},
			says: []string{"policies/grow.rego", "rule ACME666 (acme.grow) stopped the policy sandbox"},
		},
		{
			name: "count(numbers.range(1, 1e8)) with --policy-timeout 10m",
			files: map[string]string{
				"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": configMap,
				"policies/range.rego": "# METADATA\n# custom:\n#   id: ACME667\npackage acme.range\n\ndeny contains \"never\" if count(numbers.range(1, 1e8)) > 0\n",
			},
			args: []string{"--policy", "$DIR/policies", "--policy-timeout", "10m"},
			says: []string{"range.rego", "rule ACME667 (acme.range)"},
		},
		{
			// 20,000 independent rules took 20 s to compile, under no limit; on Go 1.27
			// they take 1.5 s, under the 1.5 s the sandbox allows at a policy timeout of
			// 500ms (the timeout and a second), and a CI run passed them; 60,000 take 5 s
			// but pass the sandbox's memory first. A chain of 10,000 rules, each reading
			// the one before, takes 10 s in 280 MB: nine times what a policy timeout of
			// 100ms allows, and never near the memory limit.
			name: "a chain of 10,000 rules, --policy-timeout 100ms",
			write: func(t *testing.T, dir string) {
				write(t, dir, map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": configMap, "policies/many.rego": ruleChain(10000)})
			},
			args: []string{"--policy", "$DIR/policies", "--policy-timeout", "100ms"},
			says: []string{"compiling the rules took longer than the policy timeout of 100ms"},
		},
		{
			name:  "a billion laughs of nine levels (540 bytes)",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": laughs(9)},
			says:  []string{"app/cm.yaml", "document contains excessive aliasing"},
		},
		{
			name:  "a billion laughs in a kustomization",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\ncommonAnnotations:\n" + anchors(9, "  "), "app/cm.yaml": configMap},
			says:  []string{"app/kustomization.yaml", "document contains excessive aliasing"},
		},
		{
			name:  "an anchor that contains itself",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: &a\n  x: *a\n"},
			says:  []string{"app/cm.yaml", "contains itself"},
		},
		{
			name:  "a YAML document of 4 MB",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": configMap + "data:\n  big: " + strings.Repeat("x", 4<<20) + "\n"},
			says:  []string{"app/cm.yaml", "YAML document of"},
		},
		{
			name:  "a file of 17 MiB",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": strings.Repeat("# padding\n", 17<<20/10)},
			says:  []string{"app/cm.yaml"},
		},
		{
			name: "names the API server refuses (a right-to-left override, a zero-width space, a Cyrillic а)",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"a\\u200bb\"\n  namespace: \"x\\u202eb\"\n" +
				"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  namespace: \"te\\u0430m\"\n"},
			says: []string{"app/cm.yaml:1", "U+202E RIGHT-TO-LEFT OVERRIDE", "U+0430 CYRILLIC SMALL LETTER A"},
		},
		{
			name: "a built-in function that fails (regex.match of a bad pattern)",
			files: map[string]string{
				"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": configMap,
				"policies/bad.rego": "package acme.bad\n\ndeny contains \"x\" if regex.match(\"[\", input.cluster)\n",
			},
			args: []string{"--policy", "$DIR/policies"},
			says: []string{"bad.rego:3", "a built-in function failed"},
		},
		{
			name: "an app folder that is a symbolic link out of the repository",
			write: func(t *testing.T, dir string) {
				write(t, dir, map[string]string{"olmsync.yaml": "apps:\n- {name: app, path: app}\n"})
				symlink(t, "/etc", filepath.Join(dir, "app"))
			},
			says: []string{`path "app" is a symlink to "/etc", outside the repository root`},
		},
		{
			name: "a symbolic link loop a.yaml → b.yaml → a.yaml",
			write: func(t *testing.T, dir string) {
				write(t, dir, map[string]string{"app/kustomization.yaml": "resources: [a.yaml]\n"})
				symlink(t, "b.yaml", filepath.Join(dir, "app", "a.yaml"))
				symlink(t, "a.yaml", filepath.Join(dir, "app", "b.yaml"))
			},
			says: []string{"app/a.yaml", "too many levels of symbolic links"},
		},
		{
			name: "50,001 manifest files",
			write: func(t *testing.T, dir string) {
				for i := range 50001 {
					sub := filepath.Join(dir, "many", fmt.Sprintf("d%03d", i%500))
					if i < 500 {
						if err := os.MkdirAll(sub, 0o755); err != nil {
							t.Fatal(err)
						}
					}
					if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.yaml", i)), []byte("a: 1\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			},
			says: []string{"olmsync reads at most 50000"},
		},
		{
			name:  "a remote base",
			files: map[string]string{"app/kustomization.yaml": "resources:\n- https://example.com/evil.yaml\n"},
			says:  []string{"app/kustomization.yaml:2", "--allow-remote-bases"},
		},
		{
			name: "a KSOPS generator",
			files: map[string]string{
				"app/kustomization.yaml": "resources: [cm.yaml]\ngenerators: [secrets.yaml]\n", "app/cm.yaml": configMap,
				"app/secrets.yaml": "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata:\n  name: secrets\nfiles: [s.enc.yaml]\n",
			},
			says: []string{"app/secrets.yaml", "--enable-exec-plugins", "KSOPS decrypts SOPS-encrypted Secrets"},
		},
		{
			name:  "a configMapGenerator of a missing file",
			files: map[string]string{"app/kustomization.yaml": "configMapGenerator:\n- name: c\n  files: [missing.txt]\n"},
			says:  []string{"app/kustomization.yaml", "missing.txt"},
		},
	}
}

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"

// growRule is a rule whose replace() grows a string past any memory (the tests of the Sync
// reconciler commit the same file).
var growRule = func() string {
	data, err := os.ReadFile(filepath.Join("..", "..", "policy", "testdata", "hostile", "grow", "grow.rego"))
	if err != nil {
		panic(err)
	}
	return string(data)
}()

// amplified writes n apps, each one resource of an anchor of 4,000 distinct scalars and 95
// aliases of it (yamltest.Amplified: 8 KB that expand to 384,000 nodes), and config as
// olmsync.yaml.
func amplified(n int, config string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		files := map[string]string{}
		if config != "" {
			files["olmsync.yaml"] = config
		}
		for i := range n {
			files[fmt.Sprintf("app%d/thing.yaml", i)] = yamltest.Amplified(i)
			files[fmt.Sprintf("app%d/kustomization.yaml", i)] = "resources: [thing.yaml]\n"
		}
		write(t, dir, files)
	}
}

// scalars writes n apps, each one resource of 990,000 scalars in 2 MB: under the
// 1,000,000 nodes and 3 MiB a file may have.
func scalars(n int) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		big := yamltest.Scalars(990000)
		files := map[string]string{}
		for i := range n {
			files[fmt.Sprintf("big%d/thing.yaml", i)] = big
			files[fmt.Sprintf("big%d/kustomization.yaml", i)] = "resources: [thing.yaml]\n"
		}
		write(t, dir, files)
	}
}

// laughs is a ConfigMap whose data expands 10^levels times.
func laughs(levels int) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n" + anchors(levels, "  ")
}

// anchors are the keys of a billion laughs of levels levels, indented.
func anchors(levels int, indent string) string {
	var b strings.Builder
	b.WriteString(indent + "a0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "%sa%d: &a%d [%s]\n", indent, i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	return b.String()
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	writeFiles(t, dir, files)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// ruleChain is a policy of n rules, each reading the one before: its compilation takes
// seconds (10 s for 10,000) in little memory.
func ruleChain(n int) string {
	var b strings.Builder
	b.WriteString("package acme.many\n\nr0 contains x if { some x in input.apps }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "r%d contains x if { some x in r%d; x.name != \"app-%d\" }\n", i, i-1, i)
	}
	b.WriteString("deny contains \"never\" if false\n")
	return b.String()
}
